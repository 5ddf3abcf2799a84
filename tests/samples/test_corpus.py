"""The bundled sample corpus: committed PDFs exist, have the layers the demo relies on, and match a rebuild."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from samples.build_corpus import (
    CORPUS_DIR,
    SCANNED_PDF_NAME,
    SOURCES_DIR,
    TEXT_PDF_NAME,
    build_corpus,
    build_text_pdf,
    wrap_words,
)

pytestmark = pytest.mark.unit

SAMPLES_DIR = CORPUS_DIR.parent
TEXT_PDF = CORPUS_DIR / TEXT_PDF_NAME
SCANNED_PDF = CORPUS_DIR / SCANNED_PDF_NAME
NCERT_CHAPTER = CORPUS_DIR / "ncert_chapter.md"
SECTION_420_OPENING = "420. Cheating and dishonestly inducing delivery of property.\u2014"
# A statute section opens a line: number (optionally with a letter, e.g. 379A), full stop, title, full stop, em dash.
SECTION_OPENING = re.compile(r"^(\d+[A-Z]?)\. [^\n]*?\.\u2014", re.MULTILINE)


def _page_texts(path: Path) -> list[str]:
    with pymupdf.open(path) as doc:
        return [page.get_text() for page in doc]


def _page_grey_samples(path: Path) -> list[tuple[int, int, bytes]]:
    with pymupdf.open(path) as doc:
        rendered = [page.get_pixmap(dpi=50, colorspace=pymupdf.csGRAY, alpha=False) for page in doc]
    return [(pix.width, pix.height, bytes(pix.samples)) for pix in rendered]


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> dict[str, Path]:
    return build_corpus(tmp_path_factory.mktemp("rebuilt_corpus"))


def test_committed_corpus_files_exist_and_stay_small():
    committed = [TEXT_PDF, SCANNED_PDF, NCERT_CHAPTER, SAMPLES_DIR / "demo_questions.txt"]
    committed += sorted(SOURCES_DIR.glob("*.txt"))
    for path in committed:
        assert path.is_file(), path
    assert sum(path.stat().st_size for path in committed) < 1_000_000
    assert SCANNED_PDF.stat().st_size < 400_000


def test_text_pdf_text_layer_carries_section_420_with_its_em_dash():
    full_text = "".join(_page_texts(TEXT_PDF))
    assert SECTION_420_OPENING in full_text
    section_420 = full_text[full_text.index(SECTION_420_OPENING) :]
    assert "seven years" in " ".join(section_420.split()[:80])


def test_text_pdf_keeps_every_section_opening_of_its_source_on_one_line():
    source = (SOURCES_DIR / "model_penal_code.txt").read_text(encoding="utf-8")
    source_sections = SECTION_OPENING.findall(source)
    assert len(source_sections) >= 12
    assert SECTION_OPENING.findall("".join(_page_texts(TEXT_PDF))) == source_sections


def test_text_pdf_has_running_header_and_page_number_on_every_page():
    texts = _page_texts(TEXT_PDF)
    assert 3 <= len(texts) <= 5
    for number, text in enumerate(texts, start=1):
        lines = text.strip().splitlines()
        assert lines[0] == "Sample Penal Code"
        assert lines[-1] == f"Page {number}"


def test_scanned_pdf_has_no_text_layer_only_one_image_per_page():
    with pymupdf.open(SCANNED_PDF) as doc:
        assert doc.page_count >= 2
        for page in doc:
            assert page.get_text().strip() == ""
            assert len(page.get_images()) == 1


def test_scanned_pdf_pages_carry_ink():
    # An all-white page would also have no text layer; the scan must actually show the Act.
    for _width, _height, samples in _page_grey_samples(SCANNED_PDF):
        dark = sum(1 for level in samples if level < 128)
        assert dark / len(samples) > 0.01


def test_rebuild_matches_committed_page_counts_and_text(rebuilt):
    for name, committed in ((TEXT_PDF_NAME, TEXT_PDF), (SCANNED_PDF_NAME, SCANNED_PDF)):
        assert _page_texts(rebuilt[name]) == _page_texts(committed), name


def test_rebuilt_scan_looks_like_committed_scan(rebuilt):
    # Pixels, not bytes: a newer MuPDF may encode differently but must draw the same pages.
    committed_pages = _page_grey_samples(SCANNED_PDF)
    rebuilt_pages = _page_grey_samples(rebuilt[SCANNED_PDF_NAME])
    assert len(committed_pages) == len(rebuilt_pages)
    for (w1, h1, a), (w2, h2, b) in zip(committed_pages, rebuilt_pages, strict=True):
        assert (w1, h1) == (w2, h2)
        differing = sum(1 for x, y in zip(a, b, strict=True) if abs(x - y) > 64)
        assert differing / len(a) < 0.01


def test_rebuild_is_byte_identical_within_one_pymupdf_version(rebuilt):
    source = (SOURCES_DIR / "model_penal_code.txt").read_text(encoding="utf-8")
    assert build_text_pdf(source) == rebuilt[TEXT_PDF_NAME].read_bytes()


def test_demo_questions_are_section_420_punishment_wages_definition_and_out_of_scope():
    questions = (SAMPLES_DIR / "demo_questions.txt").read_text(encoding="utf-8").splitlines()
    assert len(questions) == 3 and all(q.strip() == q and q.endswith("?") for q in questions)
    punishment, definition, out_of_scope = questions
    assert "420" in punishment and "punishment" in punishment.lower()
    assert "employer" in definition.lower()
    # The refusal must be earned: none of the third question's content words may occur anywhere in the corpus.
    corpus_text = " ".join(
        [*(p.read_text(encoding="utf-8") for p in SOURCES_DIR.glob("*.txt")), NCERT_CHAPTER.read_text("utf-8")]
    ).lower()
    content_words = {w for w in re.findall(r"[a-z]+", out_of_scope.lower()) if len(w) > 4}
    assert content_words and not any(re.search(rf"\b{w}\b", corpus_text) for w in content_words)


def test_every_document_says_it_is_fictional():
    for path in [*SOURCES_DIR.glob("*.txt"), NCERT_CHAPTER]:
        head = path.read_text(encoding="utf-8")[:600].lower()
        assert "fictional" in head or "not an ncert text" in head, path


def test_ncert_chapter_has_numbered_headings_and_a_definition():
    text = NCERT_CHAPTER.read_text(encoding="utf-8")
    headings = re.findall(r"^5\.(\d) \w", text, flags=re.MULTILINE)
    assert headings == ["1", "2", "3", "4", "5"]
    assert "An arithmetic progression is a list of numbers in which" in text


def test_wrap_words_never_exceeds_width_unless_one_word_is_wider():
    lines = wrap_words("aa bbbb c dddddddddd e", len, 6)
    assert lines == ["aa", "bbbb c", "dddddddddd", "e"]

