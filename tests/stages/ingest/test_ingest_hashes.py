"""Extract, clean, chunk and flag make, byte for byte, what they made before the ingest passes were made faster
(issue 22): the sha256 of each stage's output for every PDF in shared/data (text layers and the real scans through
Tesseract), the Indian Acts JSON files and the demo corpus, recorded at 33f4866 in ``tests/data/ingest_hashes.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.data import build_ingest_hashes as recorded

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXPECTED = json.loads(recorded.OUT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ocr():
    if shutil.which("tesseract") is None:
        pytest.fail("tesseract is not installed (make install puts it there)")
    from stages.adapters.tesseract_ocr import TesseractOcr

    with TesseractOcr() as engine:
        yield engine


def test_every_input_is_still_there(shared_data):
    assert recorded.DATA.resolve() == Path(shared_data).resolve()
    assert sorted(name for name, _ in recorded.inputs()) == sorted(EXPECTED)
    assert sum(1 for name in EXPECTED if name.endswith(".pdf")) == 9  # 7 in shared/data, 2 in the demo corpus


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_stage_outputs_are_byte_identical_to_the_recorded_ones(name, ocr):
    path = dict(recorded.inputs())[name]
    assert recorded.stage_hashes(path, ocr) == EXPECTED[name]
