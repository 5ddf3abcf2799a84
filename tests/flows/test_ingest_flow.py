"""The ingest flow under a Prefect test server, with the hash embedder: per-file errors, caching, replacement, removal.

Each test runs on both index backends (``index_uri``: FAISS in the store, a Milvus collection on the session's
milvus-lite server), and after every ingest the backend must hold exactly the chunks its manifest lists."""

from __future__ import annotations

import pytest

from contracts import ArtifactStore, Catalog, ChunkSet, IndexManifest
from flows.ingest_flow import CATALOG_POINTER, INDEX_POINTER, ingest_flow
from tests.fixtures.statutes import WAGES_ACT

pytestmark = [pytest.mark.integration]


def _ingest(store_root, paths, index_uri=None, **kw):
    report = ingest_flow(paths=[str(p) for p in paths], store=str(store_root), embedder="hash",
                         index_uri=index_uri or "faiss", **kw)
    st = ArtifactStore(store_root)
    if st.get_pointer(INDEX_POINTER) is not None:
        assert _backend_ids(st) == {c.chunk_id for c in _index_chunks(st)}, "the index holds what its manifest lists"
    return report


def _backend_ids(st: ArtifactStore) -> set[str]:
    """The chunk ids the index backend itself holds (FAISS: its slots; Milvus: a scan of each scope)."""
    from contracts import IndexScope
    from flows.index_backends import load_index

    ref = st.get_pointer(INDEX_POINTER)
    manifest = st.get(ref, IndexManifest)
    index = load_index(str(st.root), ref, "hash")
    if manifest.backend == "faiss":
        return {c.chunk_id for c in index.chunks}
    scopes = {(tenant, project) for tenant, project, _ in manifest.doc_codes}
    return set().union(*(index.all_chunk_ids(scope=IndexScope(tenant_id=t, project_id=p)) for t, p in scopes))


def _index_chunks(st: ArtifactStore) -> list:
    manifest = st.get(st.get_pointer(INDEX_POINTER), IndexManifest)
    return [c for sha in manifest.chunk_set_sha256s for c in st.get(f"chunk_set.v1:{sha}", ChunkSet).chunks]


def test_batch_with_bad_files_ingests_the_rest_and_reports_each(prefect_harness, fake_backends, corpus, tmp_path, index_uri):
    (corpus / "empty.pdf").write_bytes(b"")
    (corpus / "fake.pdf").write_bytes(b"this is not a pdf at all")
    store_root = tmp_path / "store"
    report = _ingest(store_root, [corpus, tmp_path / "does_not_exist.txt"], doc_code=None, index_uri=index_uri)
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in report.files}
    assert by_name["penal_code.txt"].status == "ingested" and by_name["penal_code.txt"].n_chunks >= 4
    assert by_name["wages_act.txt"].status == "ingested"
    assert (by_name["empty.pdf"].status, by_name["empty.pdf"].reason) == ("error", "empty_file")
    assert (by_name["fake.pdf"].status, by_name["fake.pdf"].reason) == ("error", "not_a_pdf")
    assert (by_name["does_not_exist.txt"].status, by_name["does_not_exist.txt"].reason) == ("error", "missing")
    st = ArtifactStore(store_root)
    chunks = _index_chunks(st)
    assert report.n_vectors == len(chunks) == by_name["penal_code.txt"].n_chunks + by_name["wages_act.txt"].n_chunks
    run = st.get_run(report.run_id)
    assert run.status == "completed" and {s.stage for s in run.steps} >= {"source", "extract", "clean", "chunk", "flag", "embed"}
    assert not list(st.root.rglob("*.tmp"))


def test_statute_sections_become_semantic_ids(prefect_harness, fake_backends, corpus, tmp_path, index_uri):
    store_root = tmp_path / "store"
    _ingest(store_root, [corpus / "penal_code.txt"], doc_code="IPC", index_uri=index_uri)
    ids = {c.semantic_id for c in _index_chunks(ArtifactStore(store_root))}
    assert {"IPC_378_0", "IPC_379_0", "IPC_415_0", "IPC_420_0"} <= ids


def test_reingesting_unchanged_bytes_is_skipped_from_cache(prefect_harness, fake_backends, corpus, tmp_path, index_uri):
    store_root = tmp_path / "store"
    first = _ingest(store_root, [corpus], index_uri=index_uri)
    second = _ingest(store_root, [corpus], index_uri=index_uri)
    assert [f.status for f in second.files] == ["unchanged", "unchanged"]
    assert second.index_sha256 == first.index_sha256
    run = ArtifactStore(store_root).get_run(second.run_id)
    assert all(s.cached for s in run.steps if s.stage != "source")


def test_changed_document_replaces_its_old_chunks(prefect_harness, fake_backends, corpus, tmp_path, index_uri):
    store_root = tmp_path / "store"
    _ingest(store_root, [corpus], doc_code=None, index_uri=index_uri)
    st = ArtifactStore(store_root)
    before = {c.text for c in _index_chunks(st)}
    (corpus / "wages_act.txt").write_text(WAGES_ACT.replace("five thousand rupees", "ten thousand rupees"))
    report = _ingest(store_root, [corpus / "wages_act.txt"], index_uri=index_uri)
    assert report.files[0].status == "ingested"
    after = {c.text for c in _index_chunks(st)}
    assert any("ten thousand rupees" in t for t in after)
    assert not any("five thousand rupees" in t for t in after)
    assert len(st.get(st.get_pointer(CATALOG_POINTER), Catalog).entries) == 2
    assert any("five thousand rupees" in t for t in before)


def test_same_document_under_two_tenants_is_two_entries(prefect_harness, fake_backends, corpus, tmp_path, index_uri):
    store_root = tmp_path / "store"
    _ingest(store_root, [corpus / "penal_code.txt"], doc_code="IPC", tenant="acme", index_uri=index_uri)
    _ingest(store_root, [corpus / "penal_code.txt"], doc_code="IPC", tenant="globex", index_uri=index_uri)
    st = ArtifactStore(store_root)
    entries = st.get(st.get_pointer(CATALOG_POINTER), Catalog).entries
    assert sorted(e.tenant_id for e in entries) == ["acme", "globex"]
    tenants = {c.provenance.tenant_id for c in _index_chunks(st)}
    assert tenants == {"acme", "globex"}
