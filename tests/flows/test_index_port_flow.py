"""The index port in the flows: ingest workers write their own chunks to a Milvus server, the serialised step
writes nothing they wrote, and ``reindex`` moves an index between backends from the stored vectors (nothing
re-embedded) with the same answers on both. Real Prefect test server, the session's milvus-lite server."""

from __future__ import annotations

import json
import traceback

import pytest

from contracts import ArtifactStore, IndexManifest
from flows.ingest_flow import INDEX_POINTER, ingest_flow, reindex
from tests.fixtures.statutes import WAGES_ACT

pytestmark = [pytest.mark.integration]

QUESTIONS = ("What is the punishment for theft?", "What is cheating?", "What are the minimum rates of wages?",
             "What is the punishment under IPC 420?", "Who won the football world cup in 1966?")


@pytest.fixture
def write_counts(monkeypatch):
    """How many files ingest workers wrote, and how many upserts the serialised step (``write_index``) made."""
    import flows.ingest_flow as ingest_module
    from stages.adapters.milvus_index import MilvusIndex

    counts = {"worker_files": 0, "serial_upserts": 0}
    real_write, real_upsert = ingest_module.write_own_chunks, MilvusIndex.upsert

    def write_own_chunks(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        wrote = real_write(*args, **kwargs)
        counts["worker_files"] += int(wrote)
        return wrote

    def upsert(self, records, vectors, *, scope):  # noqa: ANN001, ANN202
        if any(frame.name == "write_index" for frame in traceback.extract_stack()):
            counts["serial_upserts"] += 1
        return real_upsert(self, records, vectors, scope=scope)

    monkeypatch.setattr(ingest_module, "write_own_chunks", write_own_chunks)
    monkeypatch.setattr(MilvusIndex, "upsert", upsert)
    return counts


def _answers(store_root) -> list[tuple]:  # noqa: ANN001
    from flows.answer_flow import answer_flow

    out = []
    for question in QUESTIONS:
        answer = answer_flow(question=question, store=str(store_root), embedder="hash")
        out.append((answer.status, answer.answer, tuple(c.source_id for c in answer.citations)))
    return out


def test_ingest_workers_write_their_own_chunks_to_a_server(prefect_harness, fake_backends, corpus, tmp_path,
                                                           milvus_server, write_counts):
    store_root = tmp_path / "store"
    first = ingest_flow(paths=[str(corpus)], store=str(store_root), embedder="hash", index_uri=milvus_server)
    assert [f.status for f in first.files] == ["ingested", "ingested"]
    assert write_counts == {"worker_files": 2, "serial_upserts": 0}, "each worker wrote its file; the serial step none"
    st = ArtifactStore(store_root)
    manifest = st.get(st.get_pointer(INDEX_POINTER), IndexManifest)
    assert (manifest.backend, manifest.location) == ("milvus", milvus_server) and manifest.blobs == ()
    # Unchanged bytes: nothing is written again, and the index is the same.
    again = ingest_flow(paths=[str(corpus)], store=str(store_root), embedder="hash", index_uri=milvus_server)
    assert again.index_sha256 == first.index_sha256
    assert write_counts == {"worker_files": 2, "serial_upserts": 0}
    # A changed file: its worker writes the new version; the old chunks go.
    (corpus / "wages_act.txt").write_text(WAGES_ACT.replace("five thousand rupees", "ten thousand rupees"))
    changed = ingest_flow(paths=[str(corpus / "wages_act.txt")], store=str(store_root), embedder="hash",
                          index_uri=milvus_server)
    assert changed.files[0].status == "ingested" and write_counts["worker_files"] == 3
    from contracts import IndexScope
    from flows.index_backends import load_index

    index = load_index(str(store_root), st.get_pointer(INDEX_POINTER), "hash")
    texts = [e.chunk.text for e in index.lexical_search(["thousand", "rupee"], 50,
                                                        scope=IndexScope(tenant_id="default", project_id="default"))
             .entries]
    assert any("ten thousand rupees" in t for t in texts) and not any("five thousand rupees" in t for t in texts)


def test_reindex_moves_the_index_between_backends_with_the_same_answers(prefect_harness, fake_backends, corpus,
                                                                       tmp_path, milvus_server):
    from flows import backends

    store_root = tmp_path / "store"
    ingest_flow(paths=[str(corpus)], store=str(store_root), embedder="hash", index_uri="faiss")
    on_faiss = _answers(store_root)
    assert {status for status, _, _ in on_faiss} >= {"success"}, on_faiss
    embedder = backends.get_embedder("hash")
    embedded = embedder.texts_embedded

    ref, manifest = reindex(str(store_root), milvus_server)
    assert embedder.texts_embedded == embedded, "reindex embeds nothing"
    assert (manifest.backend, manifest.location) == ("milvus", milvus_server)
    assert ArtifactStore(store_root).get_pointer(INDEX_POINTER) == ref
    assert _answers(store_root) == on_faiss

    embedded = embedder.texts_embedded
    ref, manifest = reindex(str(store_root), "faiss")
    assert embedder.texts_embedded == embedded and manifest.backend == "faiss"
    assert _answers(store_root) == on_faiss


def test_reindex_command(prefect_harness, fake_backends, corpus, tmp_path, milvus_server, capsys):
    from cli.main import main

    store_root = tmp_path / "store"
    ingest_flow(paths=[str(corpus)], store=str(store_root), embedder="hash", index_uri="faiss")
    assert main(["--store", str(store_root), "reindex", "--to", milvus_server, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["to"] == f"Milvus at {milvus_server}" and out["from"] == "FAISS + BM25 in the store"
    assert out["stats"]["backend"] == "milvus" and out["stats"]["n_chunks"] == out["n_vectors"] > 0
    assert main(["--store", str(store_root), "reindex", "--to", "faiss"]) == 0
    assert "to FAISS + BM25 in the store" in capsys.readouterr().out
    assert main(["--store", str(store_root), "reindex", "--to", "ftp://nowhere"]) == 2
    assert "index URI 'ftp://nowhere'" in capsys.readouterr().err
