"""Ingestion fanned out on Dask (prefect-dask) gives the same catalog and index as the thread runner.

The remote-scheduler path runs on a local cluster of 2 worker *processes* started by the test; the fake
HashEmbedder is registered inside each worker process (``client.run``), so no model loads and the test can
count where the embedding happened. The no-address path (a cluster the runner starts itself) runs with
thread workers so the in-process fake is visible to them.
"""

from __future__ import annotations

import os

import pytest

from contracts import ArtifactStore, Catalog
from flows import backends
from flows.ingest_flow import CATALOG_POINTER, ingest_flow
from flows.runners import local_dask_cluster_kwargs, make_task_runner
from flows.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NOTICE = """SAMPLE NOTICES RULES (test fixture)

1. Display of notices.—Every employer shall display a notice of the minimum rates of wages at the main entrance of the establishment.
"""


def _register_hash_embedder_in_worker() -> int:
    # Runs inside each Dask worker process: the registry of fakes is per process.
    from flows import backends as worker_backends
    from tests.fakes import HashEmbedder

    worker_backends.register_embedder("hash", lambda: HashEmbedder(dim=64))
    return os.getpid()


def _texts_embedded_in_worker() -> int:
    from flows import backends as worker_backends

    embedder = worker_backends._embedders.get("hash")
    return embedder.texts_embedded if embedder is not None else 0


@pytest.fixture
def corpus(corpus):
    """The flow tests' two statutes (tests/flows/conftest.py) and a third file: three files to fan out."""
    (corpus / "notices.md").write_text(NOTICE, encoding="utf-8")
    return corpus


@pytest.fixture(scope="module")
def dask_cluster():
    """A local Dask cluster of 2 worker processes, reached by address like a remote scheduler."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(**local_dask_cluster_kwargs(2, processes=True))
    client = Client(cluster)
    try:
        yield cluster, client
    finally:
        client.close()
        cluster.close()


def _ingest(runner, corpus, store_root):  # noqa: ANN001, ANN202
    return ingest_flow.with_options(task_runner=runner)(
        paths=[str(corpus)], store=str(store_root), embedder="hash", ocr=False)


def _fingerprint(report, store_root):  # noqa: ANN001, ANN202
    catalog = ArtifactStore(store_root).get(ArtifactStore(store_root).get_pointer(CATALOG_POINTER), Catalog)
    return (
        report.index_sha256, report.catalog_sha256, report.n_vectors,
        [(f.path, f.status, f.doc_code, f.chunk_set_sha256, f.embedding_set_sha256) for f in report.files],
        [(e.filename, e.doc_code, e.chunk_set_sha256) for e in catalog.entries],
    )


def test_runner_choice_follows_settings():
    from prefect.task_runners import ThreadPoolTaskRunner
    from prefect_dask import DaskTaskRunner

    assert isinstance(make_task_runner(Settings(task_runner="thread")), ThreadPoolTaskRunner)
    remote = make_task_runner(Settings(task_runner="dask", dask_address="tcp://127.0.0.1:8786"))
    assert isinstance(remote, DaskTaskRunner) and remote.address == "tcp://127.0.0.1:8786"
    local = make_task_runner(Settings(task_runner="dask", dask_workers=3))
    assert local.address is None
    assert (local.cluster_kwargs["n_workers"], local.cluster_kwargs["processes"]) == (3, True)


def test_fan_out_on_two_dask_worker_processes_matches_the_thread_runner(
    prefect_harness, fake_backends, corpus, tmp_path, dask_cluster
):
    cluster, client = dask_cluster
    worker_pids = set(client.run(_register_hash_embedder_in_worker).values())
    assert len(worker_pids) == 2 and os.getpid() not in worker_pids

    threaded = _ingest(make_task_runner(Settings(task_runner="thread")), corpus, tmp_path / "threads")
    here = backends.get_embedder("hash")
    embedded_by_threads = here.texts_embedded
    assert embedded_by_threads > 0

    runner = make_task_runner(Settings(task_runner="dask", dask_address=cluster.scheduler_address))
    on_dask = _ingest(runner, corpus, tmp_path / "dask")

    assert [f.status for f in on_dask.files] == ["ingested"] * 3, on_dask.files
    assert _fingerprint(on_dask, tmp_path / "dask") == _fingerprint(threaded, tmp_path / "threads")
    assert len({f.doc_code for f in on_dask.files}) == 3
    # Every text was embedded in the Dask worker processes, none in this one.
    assert here.texts_embedded == embedded_by_threads
    assert sum(client.run(_texts_embedded_in_worker).values()) == embedded_by_threads


def test_local_cluster_started_by_the_runner_matches_the_thread_runner(prefect_harness, fake_backends, corpus, tmp_path):
    threaded = _ingest(make_task_runner(Settings(task_runner="thread")), corpus, tmp_path / "threads")
    runner = make_task_runner(Settings(task_runner="dask", dask_workers=2), processes=False)
    on_dask = _ingest(runner, corpus, tmp_path / "dask")
    assert _fingerprint(on_dask, tmp_path / "dask") == _fingerprint(threaded, tmp_path / "threads")


def test_dask_workers_write_their_own_chunks_to_a_milvus_server(
    prefect_harness, fake_backends, corpus, tmp_path, dask_cluster, milvus_server, monkeypatch
):
    """With the index on a server, each Dask worker process upserts its own file's chunks: this process (the
    flow's, where the serialised catalog step runs) makes no upsert, yet the collection holds every chunk the
    manifest lists."""
    from contracts import IndexManifest, IndexScope
    from flows.index_backends import load_index
    from flows.ingest_flow import INDEX_POINTER
    from stages.adapters.milvus_index import MilvusIndex

    cluster, client = dask_cluster
    client.run(_register_hash_embedder_in_worker)
    upserts_here = []
    real_upsert = MilvusIndex.upsert
    monkeypatch.setattr(MilvusIndex, "upsert", lambda self, *a, **kw: upserts_here.append(1) or real_upsert(self, *a, **kw))

    runner = make_task_runner(Settings(task_runner="dask", dask_address=cluster.scheduler_address))
    on_dask = ingest_flow.with_options(task_runner=runner)(
        paths=[str(corpus)], store=str(tmp_path / "dask"), embedder="hash", ocr=False, index_uri=milvus_server)
    assert [f.status for f in on_dask.files] == ["ingested"] * 3, on_dask.files
    assert upserts_here == [], "the flow's process wrote nothing: the workers did"

    st = ArtifactStore(tmp_path / "dask")
    manifest = st.get(st.get_pointer(INDEX_POINTER), IndexManifest)
    index = load_index(str(tmp_path / "dask"), st.get_pointer(INDEX_POINTER), "hash")
    held = index.all_chunk_ids(scope=IndexScope(tenant_id="default", project_id="default"))
    from contracts import ChunkSet

    listed = {c.chunk_id for sha in manifest.chunk_set_sha256s for c in st.get(f"chunk_set.v1:{sha}", ChunkSet).chunks}
    assert held == listed and len(held) == on_dask.n_vectors

