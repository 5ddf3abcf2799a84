"""Tesseract reads the bundled image-only sample scan (the demo's OCR path)."""

from __future__ import annotations

import io

import pymupdf
import pytest

from samples.build_corpus import CORPUS_DIR, SCANNED_PDF_NAME

pytestmark = pytest.mark.integration  # real Tesseract


def test_tesseract_reads_employer_from_first_scanned_page():
    import pytesseract
    from PIL import Image

    with pymupdf.open(CORPUS_DIR / SCANNED_PDF_NAME) as doc:
        (xref, *_rest) = doc[0].get_images()[0]
        image_bytes = doc.extract_image(xref)["image"]
    words = pytesseract.image_to_string(Image.open(io.BytesIO(image_bytes))).lower()
    assert '"employer" means' in words.replace("\u201c", '"').replace("\u201d", '"')
    assert "sample minimum wages act" in words
