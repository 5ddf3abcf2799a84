"""An index saved under another BM25 normaliser is rebuilt by the next ingest, even of unchanged bytes,
from the stored vectors (nothing re-embedded); a current one is left as it is."""

from __future__ import annotations

import json

import pytest

import stages.text.normalise as normalise
from contracts import ArtifactStore, IndexManifest
from flows import tasks
from flows.ingest_flow import INDEX_POINTER, ingest_flow
from tests.fixtures.statutes import PENAL_CODE, WAGES_ACT

pytestmark = [pytest.mark.integration]


def _ingest(store_root, corpus):
    return ingest_flow(paths=[str(corpus)], store=str(store_root), embedder="hash")


def _saved_params(store_root) -> dict:
    st = ArtifactStore(store_root)
    manifest = st.get(st.get_pointer(INDEX_POINTER), IndexManifest)
    return json.loads(st.get_blob(dict(manifest.blobs)["params"]))


def test_stale_index_is_rebuilt_on_unchanged_reingest(prefect_harness, fake_backends, tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "penal_code.txt").write_text(PENAL_CODE, encoding="utf-8")
    (corpus / "wages_act.txt").write_text(WAGES_ACT, encoding="utf-8")
    store_root = tmp_path / "store"
    with monkeypatch.context() as patch:
        patch.setattr(normalise, "NORMALISER_VERSION", "normalise.v0")
        first = _ingest(store_root, corpus)
    assert _saved_params(store_root)["normaliser"]["version"] == "normalise.v0"

    second = _ingest(store_root, corpus)
    assert [f.status for f in second.files] == ["unchanged", "unchanged"]
    assert second.index_sha256 != first.index_sha256, "the stale index was rebuilt"
    assert _saved_params(store_root)["normaliser"]["version"] == normalise.NORMALISER_VERSION
    run = ArtifactStore(store_root).get_run(second.run_id)
    assert all(s.cached for s in run.steps if s.stage == "embed"), "rebuilt from the stored vectors"
    from flows.index_backends import clear_index_caches

    clear_index_caches()
    st = ArtifactStore(store_root)
    index = tasks.load_search_index(str(store_root), st.get_pointer(INDEX_POINTER), "hash")
    assert len(index.chunks) == second.n_vectors

    third = _ingest(store_root, corpus)
    assert third.index_sha256 == second.index_sha256, "a current index is not rebuilt"
