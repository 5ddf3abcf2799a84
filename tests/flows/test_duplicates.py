"""Ingestion notices a document whose text is already stored in the tenant's project: it is reported as a
duplicate naming the stored document, not added (no twin with ``.2`` ids), and on a Milvus server the rows its
worker wrote are removed again. Real Prefect test server, hash embedder; the session's milvus-lite server."""

from __future__ import annotations

import pytest

from contracts import ArtifactStore, Catalog, IndexScope
from flows.duplicates import text_fingerprint
from flows.ingest_flow import CATALOG_POINTER, INDEX_POINTER, ingest_flow
from tests.fixtures.statutes import PENAL_CODE

pytestmark = [pytest.mark.integration]


def _relaid(text: str) -> str:
    """The same words laid out otherwise: Windows line ends, doubled spaces, curly quotes."""
    return text.replace('"', "\u201c").replace("  ", " ").replace(" ", "  ").replace("\n", "\r\n")


def test_the_fingerprint_ignores_layout_and_punctuation_but_not_words():
    assert text_fingerprint(PENAL_CODE) == text_fingerprint(_relaid(PENAL_CODE))
    assert text_fingerprint(PENAL_CODE) != text_fingerprint(PENAL_CODE.replace("seven years", "six years"))


@pytest.mark.parametrize("backend", ["faiss", "milvus"])
def test_a_second_copy_of_a_stored_text_is_reported_and_not_added(prefect_harness, fake_backends, corpus, tmp_path,
                                                                  backend, request, capsys):
    uri = "faiss" if backend == "faiss" else request.getfixturevalue("milvus_server")
    store_root = tmp_path / "store"
    (corpus / "penal_code_copy.txt").write_text(_relaid(PENAL_CODE), encoding="utf-8", newline="")
    first = ingest_flow(paths=[str(corpus)], store=str(store_root), embedder="hash", index_uri=uri)
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in first.files}
    # Sorted paths: penal_code.txt comes first and is kept; its copy is the duplicate.
    assert by_name["penal_code.txt"].status == "ingested" and by_name["wages_act.txt"].status == "ingested"
    dup = by_name["penal_code_copy.txt"]
    assert (dup.status, dup.reason, dup.duplicate_of) == ("duplicate", "duplicate_text", "penal_code.txt")
    st = ArtifactStore(store_root)
    catalog = st.get(st.get_pointer(CATALOG_POINTER), Catalog)
    assert sorted(e.filename for e in catalog.entries) == ["penal_code.txt", "wages_act.txt"]
    assert not any(f.id_clashes for f in first.files), "no twin ids were made"
    assert first.n_vectors == sum(e.n_chunks for e in catalog.entries)

    from flows.index_backends import load_index

    index = load_index(str(store_root), st.get_pointer(INDEX_POINTER), "hash")
    scope = IndexScope(tenant_id="default", project_id="default")
    assert index.stats(scope=scope).n_in_scope == first.n_vectors, "the duplicate's rows are not in the index"

    # Asked again on its own, in a later run: the same notice, through the CLI.
    from cli.ingest import print_ingest

    again = ingest_flow(paths=[str(corpus / "penal_code_copy.txt")], store=str(store_root), embedder="hash",
                        index_uri=uri)
    assert [(f.status, f.duplicate_of) for f in again.files] == [("duplicate", "penal_code.txt")]
    assert again.n_vectors == first.n_vectors
    print_ingest(again)
    out = capsys.readouterr().out
    assert "penal_code_copy.txt has the same text as penal_code.txt (already stored): not added" in out
    assert "0/1 files ingested" in out
    index = load_index(str(store_root), st.get_pointer(INDEX_POINTER), "hash")
    assert index.stats(scope=scope).n_in_scope == first.n_vectors


def test_the_same_text_in_another_project_is_no_duplicate(prefect_harness, fake_backends, corpus, tmp_path):
    store_root = tmp_path / "store"
    ingest_flow(paths=[str(corpus / "penal_code.txt")], store=str(store_root), embedder="hash", index_uri="faiss")
    (corpus / "penal_code_copy.txt").write_text(_relaid(PENAL_CODE), encoding="utf-8", newline="")
    other = ingest_flow(paths=[str(corpus / "penal_code_copy.txt")], store=str(store_root), embedder="hash",
                        index_uri="faiss", project="other")
    assert [f.status for f in other.files] == ["ingested"]
