"""TesseractOcr: real tesseract on a rendered page, parallel batches in order, clear errors when it is missing."""

from __future__ import annotations

import pymupdf
import pytest

from contracts.errors import CiteboundError
from stages.adapters.tesseract_ocr import OcrUnavailableError, TesseractOcr, words_to_text

pytestmark = pytest.mark.integration


def rendered_page(text: str) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(72, 72, 520, 400), text, fontsize=16)
    png = page.get_pixmap(dpi=300, colorspace=pymupdf.csGRAY).tobytes("png")
    doc.close()
    return png


@pytest.fixture(scope="module")
def ocr():
    engine = TesseractOcr(workers=2)
    yield engine
    engine.close()


def test_reads_a_rendered_page_with_confidence(ocr):
    text, confidence = ocr.ocr_png(rendered_page("Payment of minimum rates of wages\nEmployer shall pay every employee"))
    words = text.lower().split()
    for word in ("payment", "minimum", "wages", "employer", "employee"):
        assert word in words
    assert confidence is not None and 60.0 <= confidence <= 100.0


def test_ocr_many_keeps_input_order(ocr):
    pngs = [rendered_page("Inspectors appointed"), rendered_page("Overtime wages"), rendered_page("Bar of suits")]
    results = ocr.ocr_many(pngs, lang="eng")
    assert [r[0].split()[0].lower() for r in results] == ["inspectors", "overtime", "bar"]
    assert ocr.ocr_many([]) == []


def test_blank_page_gives_no_text_and_no_confidence(ocr):
    doc = pymupdf.open()
    png = doc.new_page().get_pixmap(dpi=100).tobytes("png")
    assert ocr.ocr_png(png) == ("", None)


def test_missing_binary_is_a_clear_error():
    engine = TesseractOcr(tesseract_cmd="/nonexistent/tesseract")
    with pytest.raises(OcrUnavailableError) as info:
        engine.ocr_png(rendered_page("x"))
    assert isinstance(info.value, CiteboundError) and "tesseract" in str(info.value)


def test_missing_language_is_a_clear_error(ocr):
    with pytest.raises(OcrUnavailableError) as info:
        ocr.ocr_png(rendered_page("x"), lang="zzz")
    assert "zzz" in str(info.value)


def test_words_to_text_groups_lines_and_paragraphs():
    data = {
        "text": ["", "Rule", "2.", "Definitions", "(a)", "Act"],
        "conf": ["-1", "96.5", "90", "80", "70", "-1"],
        "block_num": [1, 1, 1, 1, 2, 2], "par_num": [1, 1, 1, 1, 1, 1], "line_num": [1, 1, 1, 2, 1, 1],
    }
    assert words_to_text(data) == ("Rule 2.\nDefinitions\n\n(a) Act", 84.12)
