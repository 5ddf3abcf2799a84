"""Cited words highlighted on the right page(s) of the PDF: word boxes from PyMuPDF, aligned with the chunk;
a chunk across a page break is highlighted on both pages; no highlight where it cannot be placed."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from api.highlight import find_highlights
from tests.api.conftest import start_api

pytestmark = [pytest.mark.integration]

PDF = Path(__file__).resolve().parents[2] / "samples" / "corpus" / "model_penal_code.pdf"


@pytest.fixture(scope="module")
def pdf_api(tmp_path_factory, prefect_harness, module_backends):
    from flows.ingest_flow import ingest_flow

    root = tmp_path_factory.mktemp("hl") / "store"
    report = ingest_flow(paths=[str(PDF)], doc_code="IPC", store=str(root), embedder="hash")
    assert report.files[0].status == "ingested"
    yield from start_api(root)


def _chunks(api):  # noqa: ANN001, ANN202
    engine = api.app.state.engine
    entry = engine.documents("default")[0]
    return list(engine._chunks_by_id(entry.chunk_set_sha256).values())


def _overlap(a, b) -> bool:  # noqa: ANN001
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_cited_words_are_boxed_on_their_page_and_painted_in_the_image(pdf_api):
    with pdf_api.client() as c:
        answer = c.post("/rag/query", json={"query": "What is the punishment for cheating under section 420?"}).json()
        assert answer["status"] == "success", answer.get("refusal_reason")
        cite = answer["citations"][0]
        hl = c.get(f"/sources/{cite['source_id']}/highlights").json()
        png = c.get(f"/sources/{cite['source_id']}/page.png")
    assert hl["confident"] and hl["page"] == cite["page"] and hl["boxes"]
    chunk_text = next(ch.text for ch in _chunks(pdf_api) if ch.semantic_id == cite["source_id"])
    # Independently of the aligner: where PyMuPDF finds a phrase of the chunk on that page.
    phrase = " ".join(chunk_text.split()[3:7])
    with pymupdf.open(PDF) as doc:
        spots = doc[cite["page"] - 1].search_for(phrase)
    assert spots, phrase
    assert any(_overlap(box, tuple(spots[0])) for box in hl["boxes"])
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    pix = pymupdf.Pixmap(png.content)
    scale = pix.width / pymupdf.open(PDF)[cite["page"] - 1].rect.width
    x0, y0, x1, y1 = hl["boxes"][0]
    # A pixel between the glyphs of the first box: the translucent yellow fill, not plain white paper.
    r, g, b = pix.pixel(int((x0 + x1) / 2 * scale), int((y0 + 0.15 * (y1 - y0)) * scale))[:3]
    assert b < 200 and r > 180 and g > 150, (r, g, b)


def test_a_chunk_across_a_page_break_is_highlighted_on_both_pages(pdf_api):
    spanning = [ch for ch in _chunks(pdf_api) if ch.provenance.page_end > ch.provenance.page]
    assert spanning, "the sample PDF should have a chunk running over a page break"
    ch = spanning[0]
    with pdf_api.client() as c:
        first = c.get(f"/sources/{ch.semantic_id}/highlights", params={"page": ch.provenance.page}).json()
        second = c.get(f"/sources/{ch.semantic_id}/highlights", params={"page": ch.provenance.page_end}).json()
        outside = c.get(f"/sources/{ch.semantic_id}/page.png", params={"page": ch.provenance.page_end + 1})
    assert first["confident"] and first["boxes"] and second["boxes"]
    assert outside.status_code == 404 and outside.json()["error"] == "not_found"


def test_no_highlight_where_the_words_cannot_be_placed():
    data = PDF.read_bytes()
    found = find_highlights(data, "The moon has craters and no statute mentions them at all, not one.", 1, 2)
    assert not found.confident and found.on(1) == ()
    with pymupdf.open(PDF) as doc:
        real = doc[1].get_text()[:400]
    # The right words on the wrong page are not highlighted either.
    assert not find_highlights(data, real, 1, 1).confident
    assert find_highlights(data, real, 2, 2).confident


def test_text_sources_have_no_page_image(tmp_path, prefect_harness, module_backends):
    from tests.api.conftest import ingest_fixtures

    ingest_fixtures(tmp_path / "store", tmp_path / "src")
    for api in start_api(tmp_path / "store"):
        with api.client() as c:
            sid = c.post("/rag/query", json={"query": "punishment for theft", "mode": "retrieval_only"}).json()[
                "results"][0]["source_id"]
            assert c.get(f"/sources/{sid}/highlights").json()["has_page_image"] is False
            r = c.get(f"/sources/{sid}/page.png")
            assert r.status_code == 404 and r.json()["error"] == "no_page_image"
