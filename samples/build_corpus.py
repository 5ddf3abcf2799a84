"""Build citebound's bundled sample PDFs from the plain texts in ``samples/sources/``.

Run: ``.venv/bin/python samples/build_corpus.py [--out DIR]`` (default ``samples/corpus/``). Offline, PyMuPDF only.

Writes:
- ``model_penal_code.pdf``: a text PDF (real text layer) of ``sources/model_penal_code.txt``, A4, with a running
  header and a page number on every page, so that the cleaner's header/footer removal has something to remove.
- ``wages_act_scanned.pdf``: an image-only PDF of ``sources/wages_act.txt``: each page is typeset, rasterised to
  a grayscale image and placed on an otherwise empty page, so there is no text layer and OCR is needed.

The output is byte-for-byte reproducible with the same PyMuPDF version (fixed metadata dates, fixed file id,
no font subsetting with random prefixes); see ``samples/README.md``.

>>> from samples.build_corpus import wrap_words
>>> assert wrap_words("a bb ccc", lambda s: len(s), 4) == ["a bb", "ccc"]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pymupdf

SAMPLES_DIR = Path(__file__).resolve().parent
CORPUS_DIR = SAMPLES_DIR / "corpus"
# Beside the corpus, not in it: `citebound ingest samples/corpus` must not ingest each text twice.
SOURCES_DIR = SAMPLES_DIR / "sources"

TEXT_PDF_NAME = "model_penal_code.pdf"
SCANNED_PDF_NAME = "wages_act_scanned.pdf"

# PDF date strings are part of the file bytes; fixing them (and the file id) makes rebuilds identical.
FIXED_PDF_DATE = "D:20240101000000+00'00'"
A4 = pymupdf.paper_rect("a4")


@dataclass(frozen=True)
class PageStyle:
    """Geometry and fonts of one typeset document (points; 72 points = 1 inch)."""

    body_font: str = "tiro"
    bold_font: str = "tibo"
    italic_font: str = "tiit"
    body_size: float = 11.5
    heading_size: float = 12.0
    title_size: float = 14.0
    leading: float = 1.45
    margin_x: float = 72.0
    margin_top: float = 78.0
    margin_bottom: float = 72.0
    clause_indent: float = 20.0
    paragraph_gap: float = 5.0
    running_header: str | None = None
    page_numbers: bool = True


TEXT_PDF_STYLE = PageStyle(running_header="Sample Penal Code")
# A scanned gazette: no running header, but page numbers (they end up in the image, like a real scan).
SCANNED_PDF_STYLE = PageStyle(body_size=12.0, margin_x=70.0)


def wrap_words(text: str, measure: Callable[[str], float], width: float) -> list[str]:
    """Greedy word wrap: the longest run of words per line whose measured width fits `width`.

    >>> assert wrap_words("one two three", lambda s: len(s), 7) == ["one two", "three"]
    """
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and measure(candidate) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def _line_kind(line: str, title_block_index: int | None) -> str:
    """How a source line is laid out: title, heading (centred), subheading (centred italic), clause, body.

    `title_block_index` is the line's position in the opening block (None after it): its first line is the
    title, the rest are centred italic notes.
    """
    if title_block_index == 0:
        return "title"
    if title_block_index is not None:
        return "subheading"
    if line.isupper() or line.startswith("CHAPTER "):
        return "heading"
    if line in ("Illustration", "Illustrations") or (line.startswith("Of ") and len(line) < 40):
        return "subheading"
    if line.startswith("(") and ")" in line[:6]:
        return "clause"
    return "body"


class _Typesetter:
    """Lays out lines top to bottom over as many A4 pages as needed, with header and page numbers."""

    def __init__(self, style: PageStyle) -> None:
        self.style = style
        self.doc = pymupdf.open()
        self.fonts = {
            "body": pymupdf.Font(style.body_font),
            "bold": pymupdf.Font(style.bold_font),
            "italic": pymupdf.Font(style.italic_font),
        }
        self.page: pymupdf.Page | None = None
        self.writer: pymupdf.TextWriter | None = None
        self.y = 0.0
        self.width = A4.width - 2 * style.margin_x

    def _new_page(self) -> None:
        self._finish_page()
        self.page = self.doc.new_page(width=A4.width, height=A4.height)
        self.writer = pymupdf.TextWriter(self.page.rect)
        self.y = self.style.margin_top
        if self.style.running_header:
            self._centred(self.style.running_header, self.fonts["italic"], 9.5, 44.0)

    def _finish_page(self) -> None:
        if self.page is None or self.writer is None:
            return
        # Written last so that the number is also the last line of the page's text, as in most real PDFs.
        if self.style.page_numbers:
            self._centred(f"Page {self.doc.page_count}", self.fonts["body"], 9.5, A4.height - 40.0)
        self.writer.write_text(self.page)
        self.page = None

    def _centred(self, text: str, font: pymupdf.Font, size: float, baseline: float) -> None:
        assert self.writer is not None
        x = (A4.width - font.text_length(text, fontsize=size)) / 2
        self.writer.append((x, baseline), text, font=font, fontsize=size)

    def _room_for(self, line_count: int, size: float) -> bool:
        return self.y + line_count * size * self.style.leading <= A4.height - self.style.margin_bottom

    def paragraph(self, text: str, kind: str) -> None:
        style = self.style
        font, size, centred, indent = {
            "title": (self.fonts["bold"], style.title_size, True, 0.0),
            "heading": (self.fonts["bold"], style.heading_size, True, 0.0),
            "subheading": (self.fonts["italic"], style.body_size, True, 0.0),
            "clause": (self.fonts["body"], style.body_size, False, style.clause_indent),
            "body": (self.fonts["body"], style.body_size, False, 0.0),
        }[kind]
        lines = wrap_words(text, lambda s: font.text_length(s, fontsize=size), self.width - indent)
        # Headings keep two body lines with them, so no page ends on a heading.
        keep_with_next = 2 if kind in ("heading", "subheading", "title") else 0
        if self.page is None or not self._room_for(min(len(lines), 2) + keep_with_next, size):
            self._new_page()
        assert self.writer is not None
        for line in lines:
            if not self._room_for(1, size):
                self._new_page()
            self.y += size * style.leading
            if centred:
                x = (A4.width - font.text_length(line, fontsize=size)) / 2
            else:
                x = style.margin_x + indent
            self.writer.append((x, self.y), line, font=font, fontsize=size)
        self.y += style.paragraph_gap

    def blank(self) -> None:
        self.y += self.style.paragraph_gap

    def finish(self) -> pymupdf.Document:
        self._finish_page()
        return self.doc


def typeset(source_text: str, style: PageStyle) -> pymupdf.Document:
    """Typeset a source text (first block = title, one paragraph per line, blank lines = extra space).

    >>> doc = typeset("A Title\\n\\n1. Short.\\u2014Text.", PageStyle())
    >>> assert "1. Short.\\u2014Text." in doc[0].get_text() and doc.page_count == 1
    """
    setter = _Typesetter(style)
    title_block_index: int | None = 0
    for raw_line in source_text.splitlines():
        line = raw_line.strip()
        if not line:
            title_block_index = None
            setter.blank()
            continue
        setter.paragraph(line, _line_kind(line, title_block_index))
        if title_block_index is not None:
            title_block_index += 1
    return setter.finish()


def _pdf_bytes(doc: pymupdf.Document, title: str) -> bytes:
    doc.set_metadata(
        {
            "title": title,
            "author": "citebound sample corpus (fictional)",
            "subject": "Fictional text written for the citebound demo; not law, not an NCERT text.",
            "creator": "samples/build_corpus.py",
            "producer": "PyMuPDF",
            "creationDate": FIXED_PDF_DATE,
            "modDate": FIXED_PDF_DATE,
        }
    )
    # Subset prefixes are derived from the glyphs used, not random, so subsetting keeps rebuilds identical.
    doc.subset_fonts()
    return doc.tobytes(garbage=4, deflate=True, deflate_images=True, deflate_fonts=True, no_new_id=True)


def build_text_pdf(source_text: str) -> bytes:
    """The statute as a text PDF with a running header and page numbers."""
    doc = typeset(source_text, TEXT_PDF_STYLE)
    return _pdf_bytes(doc, "Sample Penal Code (fictional, for demonstration)")


# Grey levels at or above this become paper white, below it ink black, as a bilevel office scanner does.
INK_THRESHOLD = 160
_BILEVEL_TABLE = bytes(0 if level < INK_THRESHOLD else 255 for level in range(256))


def build_scanned_pdf(source_text: str, dpi: int = 200) -> bytes:
    """The Act as an image-only PDF: each typeset page rasterised, made bilevel and placed as a picture.

    Bilevel pixels in a grayscale PNG keep a page near 70 KB (antialiased grey: ~190 KB) and read the same
    under Tesseract.
    """
    typeset_doc = typeset(source_text, SCANNED_PDF_STYLE)
    scan = pymupdf.open()
    for page in typeset_doc:
        grey = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
        bilevel = pymupdf.Pixmap(
            pymupdf.csGRAY, grey.width, grey.height, bytes(grey.samples).translate(_BILEVEL_TABLE), False
        )
        bilevel.set_dpi(dpi, dpi)
        scan_page = scan.new_page(width=page.rect.width, height=page.rect.height)
        scan_page.insert_image(scan_page.rect, stream=bilevel.tobytes("png"))
    return _pdf_bytes(scan, "The Sample Minimum Wages Act, 2024 (fictional, scanned)")


def build_corpus(out_dir: Path = CORPUS_DIR, sources_dir: Path = SOURCES_DIR) -> dict[str, Path]:
    """Write both sample PDFs into `out_dir`; returns {file name: path}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = {
        TEXT_PDF_NAME: build_text_pdf((sources_dir / "model_penal_code.txt").read_text(encoding="utf-8")),
        SCANNED_PDF_NAME: build_scanned_pdf((sources_dir / "wages_act.txt").read_text(encoding="utf-8")),
    }
    written: dict[str, Path] = {}
    for name, data in outputs.items():
        path = out_dir / name
        path.write_bytes(data)
        written[name] = path
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=CORPUS_DIR, help="output folder (default: samples/corpus)")
    args = parser.parse_args(argv)
    for name, path in build_corpus(args.out).items():
        with pymupdf.open(path) as doc:
            print(f"{name}: {doc.page_count} pages, {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
