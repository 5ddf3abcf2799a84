"""fsck, repair and gc on a store ingested with the hash embedder (in process; tests/faults runs the commands).

fsck names what does not verify as kind:sha with the documents and tenants it affects; repair re-derives a
damaged document from its stored source bytes (or drops it when they are gone) and the store verifies again;
gc removes what nothing current references and keeps everything that is."""

from __future__ import annotations

import json

import pytest

from contracts import ArtifactStore, Catalog, ChunkSet, EmbeddingSet, IndexManifest
from flows.answer_flow import answer_flow
from flows.ingest_flow import CATALOG_POINTER, INDEX_POINTER, ingest_flow
from flows.maintenance import fsck, gc, repair
from tests.fixtures.statutes import PENAL_CODE, WAGES_ACT

pytestmark = [pytest.mark.integration]


@pytest.fixture
def store_root(tmp_path, prefect_harness, fake_backends):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "penal_code.txt").write_text(PENAL_CODE, encoding="utf-8")
    (d / "wages_act.txt").write_text(WAGES_ACT, encoding="utf-8")
    root = tmp_path / "store"
    ingest_flow(paths=[str(d / "penal_code.txt")], doc_code="IPC", tenant="acme", store=str(root), embedder="hash")
    ingest_flow(paths=[str(d / "wages_act.txt")], doc_code="WagesAct", tenant="globex", store=str(root),
                embedder="hash")
    return root


def _entry(st: ArtifactStore, code: str):
    return next(e for e in st.get(st.get_pointer(CATALOG_POINTER), Catalog).entries if e.doc_code == code)


def _corrupt_chunk_set(st: ArtifactStore, sha: str) -> None:
    path = st.root / "objects" / "chunk_set.v1" / sha[:2] / f"{sha}.json"
    text = path.read_text(encoding="utf-8")
    assert "theft" in text
    path.write_text(text.replace("theft", "thaft", 1), encoding="utf-8")  # one word changed


def _ask(root, q: str, tenant: str):
    from flows import index_views

    index_views._views.clear()
    return answer_flow(question=q, tenant=tenant, store=str(root), embedder="hash")


def test_a_clean_store_verifies(store_root):
    report = fsck(ArtifactStore(store_root))
    assert report.ok, report.problems
    assert report.n_objects > 10 and report.n_blobs >= 4 and report.n_pointers >= 2


def test_fsck_names_a_corrupt_chunk_set_with_its_document_and_tenant_and_repair_restores_it(store_root):
    st = ArtifactStore(store_root)
    ipc = _entry(st, "IPC")
    _corrupt_chunk_set(st, ipc.chunk_set_sha256)
    report = fsck(st)
    (problem,) = [p for p in report.problems]
    assert problem.name == f"chunk_set.v1:{ipc.chunk_set_sha256[:12]}" and problem.problem == "corrupt"
    assert problem.documents == ("IPC (penal_code.txt)",) and problem.tenants == ("acme",) and not problem.shared
    # Until repair: the other tenant is answered, this one refused by name when it needs the document.
    assert _ask(store_root, "What is the penalty under section 22?", "globex").status == "success"
    refused = _ask(store_root, "What is the punishment for theft?", "acme")
    assert refused.reason_code == "artifact_corrupt" and "IPC (penal_code.txt) is damaged" in refused.refusal_reason
    done = repair(st, embedder_name="hash")
    assert done.removed == (problem.name,) and done.rederived == ("IPC (penal_code.txt)",) and not done.dropped
    assert done.remaining == () and fsck(st).ok
    assert _entry(st, "IPC").chunk_set_sha256 == ipc.chunk_set_sha256  # the same bytes, re-derived
    assert _ask(store_root, "What is the punishment for theft?", "acme").status == "success"


def test_lost_vectors_and_index_are_rederived(store_root):
    st = ArtifactStore(store_root)
    wages = _entry(st, "WagesAct")
    emb = st.get(f"embedding_set.v1:{wages.embedding_set_sha256}", EmbeddingSet)
    st.blob_path(emb.vectors_blob).unlink()
    manifest = st.get(st.get_pointer(INDEX_POINTER), IndexManifest)
    faiss_sha = dict(manifest.blobs)["faiss"]
    st.blob_path(faiss_sha).write_bytes(b"not an index")
    report = fsck(st)
    by_name = {p.name: p for p in report.problems}
    assert by_name[f"blob:{emb.vectors_blob[:12]}"].problem == "missing"
    assert by_name[f"blob:{emb.vectors_blob[:12]}"].documents == ("WagesAct (wages_act.txt)",)
    assert by_name[f"blob:{faiss_sha[:12]}"].shared and by_name[f"blob:{faiss_sha[:12]}"].tenants == ("acme", "globex")
    done = repair(st, embedder_name="hash")
    assert done.rederived == ("WagesAct (wages_act.txt)",) and "index" in done.rebuilt and done.remaining == ()
    assert _ask(store_root, "What is the penalty under section 22?", "globex").status == "success"


def test_a_lost_catalog_is_rebuilt_from_the_index(store_root):
    st = ArtifactStore(store_root)
    before = st.get(st.get_pointer(CATALOG_POINTER), Catalog)
    ref = st.get_pointer(CATALOG_POINTER)
    path = st.root / "objects" / ref.kind / ref.sha256[:2] / f"{ref.sha256}.json"
    path.write_text("{}", encoding="utf-8")
    report = fsck(st)
    assert any(p.name == f"catalog.v1:{ref.sha256[:12]}" and p.shared for p in report.problems)
    done = repair(st, embedder_name="hash")
    assert "catalog" in done.rebuilt and done.remaining == ()
    after = st.get(st.get_pointer(CATALOG_POINTER), Catalog)
    assert [(e.doc_key, e.chunk_set_sha256, e.n_pages) for e in after.entries] == [
        (e.doc_key, e.chunk_set_sha256, e.n_pages) for e in before.entries]


def test_a_document_without_source_bytes_is_dropped_with_a_report(store_root, tmp_path):
    st = ArtifactStore(store_root)
    ipc = _entry(st, "IPC")
    _corrupt_chunk_set(st, ipc.chunk_set_sha256)
    st.blob_path(ipc.doc_sha256).write_bytes(b"garbled")
    (tmp_path / "corpus" / "penal_code.txt").write_text("changed since", encoding="utf-8")  # no copy to restore from
    done = repair(st, embedder_name="hash")
    assert done.dropped == ("IPC (penal_code.txt): its source bytes are lost; ingest the file again",)
    assert done.remaining == () and [e.doc_code for e in st.get(st.get_pointer(CATALOG_POINTER), Catalog).entries] == [
        "WagesAct"]
    assert _ask(store_root, "What is the penalty under section 22?", "globex").status == "success"


def test_gc_removes_what_nothing_references_and_keeps_the_rest(store_root, tmp_path):
    st = ArtifactStore(store_root)
    garbage = st.put_blob(b"an orphan", suffix=".pdf")
    old_index = dict(st.get(st.get_pointer(INDEX_POINTER), IndexManifest).blobs)
    (tmp_path / "corpus" / "penal_code.txt").write_text(PENAL_CODE + "\n421. New section.\n", encoding="utf-8")
    ingest_flow(paths=[str(tmp_path / "corpus" / "penal_code.txt")], doc_code="IPC", tenant="acme",
                store=str(store_root), embedder="hash")  # a new version: the old bytes and index are unreferenced
    dry = gc(st, dry_run=True)
    assert dry.blobs_removed >= 3 and st.has_blob(garbage)
    done = gc(st)
    assert done.blobs_removed == dry.blobs_removed and not st.has_blob(garbage)
    new_index = dict(st.get(st.get_pointer(INDEX_POINTER), IndexManifest).blobs)
    stale = set(old_index.values()) - set(new_index.values())
    assert stale and not any(st.has_blob(sha) for sha in stale)  # the old index's own blobs are gone
    assert all(st.has_blob(sha) for sha in new_index.values())  # the current index's are all kept
    assert fsck(st).ok and gc(st).blobs_removed == 0
    assert _ask(store_root, "What is the punishment for theft?", "acme").status == "success"
    assert json.loads(done.model_dump_json())["blob_bytes"] > 0


def _dangling(st: ArtifactStore) -> list[str]:
    """The stage-cache entries that name an object the store does not hold."""
    return [key for key, ref in st.cache_entries() if ref is not None and not st.exists(ref)]


def test_fsck_names_a_dangling_cache_entry_and_repair_removes_it(store_root):
    from contracts import ArtifactRef, cache_key

    st = ArtifactStore(store_root)
    key = cache_key("chunk", "chunk.v1", "c" * 64, (ArtifactRef(kind="cleaned_document.v1", sha256="1" * 64),))
    st.remember(key, ArtifactRef(kind="chunk_set.v1", sha256="2" * 64))  # an output the store never held
    report = fsck(st)
    assert [(p.problem, p.name) for p in report.problems] == [("dangling", f"cache:{key[:12]}")]
    assert "chunk_set.v1:222222222222" in report.problems[0].detail
    mended = repair(st)
    assert f"cache:{key[:12]}" in mended.removed and not mended.remaining
    assert fsck(st).ok and not _dangling(st)


def test_a_rejected_upload_leaves_no_cache_entry_naming_what_it_discarded(store_root):
    import pymupdf

    from api.engine import Engine, EngineConfig

    st = ArtifactStore(store_root)
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "1. Short title. This Act may be called the Truncated Act. " * 20)
    data = doc.tobytes()
    engine = Engine(EngineConfig(store_root=store_root, embedder="hash"))
    assert not _dangling(st)
    for name, body in (("truncated.pdf", data[: len(data) // 2]), ("bad.json", b"{"), ("blank.txt", b"\x0c\n")):
        report = engine.ingest_upload(name, body, tenant="acme", project="default")
        assert report.files[0].status == "error", report.files[0]
        assert not _dangling(st), name  # a cache entry naming an object the rejected upload never kept
    assert fsck(st).ok
    # And a good upload after them is answered from the cache entries it wrote.
    assert engine.ingest_upload("kite_act.txt", b"5. Flying kites.-Whoever flies a kite shall be fined.\n",
                                tenant="acme", project="default").files[0].status == "ingested"
    assert not _dangling(st) and fsck(st).ok
