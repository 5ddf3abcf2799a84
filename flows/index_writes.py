"""Writing the index: the catalog's chunk sets and their stored vectors into the index backend the settings name.

Two writers, by backend:

- **FAISS + BM25** (the default) has one writer: the ingest flow's serialised catalog update reads the previous
  index, removes the chunk sets that left the catalog, adds the new ones, and stores the blobs (a full build when
  the previous index does not fit the code or config any more).
- **A Milvus server** takes writes from many processes at once: each ingest worker (a thread, or a Dask worker
  process) upserts its own file's chunks as soon as they are embedded (``write_own_chunks``), and the serialised
  update only deletes what left the catalog, writes what no worker wrote (renamed ids, moved documents), and
  records the manifest. A milvus-lite ``.db`` file is embedded in one process, so it gets the single writer.

Either way the artifact store stays the source of truth: ``write_index(..., full=True)`` rebuilds any backend
from the stored chunk sets and vectors without embedding anything (``citebound reindex --to URI``).

While workers write, a file's chunks become searchable in its tenant's project a little before the catalog lists
them; a run that dies between the two leaves rows no manifest names, which the next full rebuild removes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from contracts import ArtifactRef, ArtifactStore, Catalog, ChunkSet, EmbeddingSet, IndexConfig, IndexManifest
from contracts.errors import CiteboundError
from contracts.index import IndexScope
from flows.index_backends import IndexTarget, collection_name, load_index, manifest_target, open_milvus
from flows.store_layout import vectors_from_bytes

__all__ = ["WorkerWrite", "prepare_worker_writes", "write_own_chunks", "write_index", "milvus_is_current",
           "build_backend", "fresh_collection", "stored_model", "scope_of", "SERVER_WRITERS"]

SERVER_WRITERS = 2
"""Threads the serialised step writes a full rebuild to a Milvus server with."""


@dataclass(frozen=True)
class WorkerWrite:
    """What an ingest worker needs to upsert its own chunks into a Milvus server (picklable for Dask)."""

    location: str
    collection: str
    index_cfg: IndexConfig


def scope_of(chunk_set: ChunkSet) -> IndexScope:
    """The scope a document's chunks are written in: its tenant and project."""
    return IndexScope(tenant_id=chunk_set.source.tenant_id, project_id=chunk_set.source.project_id)


def _vectors(store: ArtifactStore, embedding_sha: str) -> np.ndarray:
    emb = store.get(f"embedding_set.v1:{embedding_sha}", EmbeddingSet)
    return vectors_from_bytes(store.get_blob(emb.vectors_blob))


def _open(target: IndexTarget, collection: str, cfg: IndexConfig, embedder, *, create: bool,  # noqa: ANN001
          doc_codes=None):  # noqa: ANN001, ANN202
    return open_milvus(target.location or "", collection, cfg, embedding_model=embedder.model_name,
                       model_revision=embedder.model_revision, dim=embedder.dim, create=create, doc_codes=doc_codes)


def milvus_is_current(previous: IndexManifest | None, target: IndexTarget, store_root: str, cfg: IndexConfig,
                      embedder) -> bool:  # noqa: ANN001
    """Whether the previous manifest's collection is the target's and fits this code, config and model."""
    if previous is None or previous.backend != "milvus" or manifest_target(previous) != target:
        return False
    if previous.collection != collection_name(store_root) or previous.index_type != cfg.index_type:
        return False
    if (previous.embedding_model, previous.model_revision, previous.dim) != (
            embedder.model_name, embedder.model_revision, embedder.dim):
        return False
    try:
        _open(target, previous.collection, cfg, embedder, create=False)
    except CiteboundError:
        return False
    return True


def prepare_worker_writes(store_root: str, previous: IndexManifest | None, target: IndexTarget, cfg: IndexConfig,
                          embedder) -> WorkerWrite | None:  # noqa: ANN001
    """Before the fan-out: the write spec workers use, when the target is a server they may write to now.

    A store's first index gets a fresh (emptied) collection here; a previous index on the same, current collection
    is written into as it is; anything else (moving from FAISS or another collection, a collection that no longer
    fits) is a full rebuild by the serialised step, so workers write nothing."""
    if not target.is_server:
        return None
    collection = collection_name(store_root)
    if previous is None:
        fresh_collection(target, collection, cfg, embedder)
    elif not milvus_is_current(previous, target, store_root, cfg, embedder):
        return None
    return WorkerWrite(location=target.location or "", collection=collection, index_cfg=cfg)


def fresh_collection(target: IndexTarget, collection: str, cfg: IndexConfig, embedder):  # noqa: ANN001, ANN202
    """An empty collection (dropped first when one exists), created and checked."""
    from flows.index_backends import index_fingerprint, milvus_client
    from stages.adapters.milvus_index import MilvusIndex

    MilvusIndex(milvus_client(target.location or ""), collection, embedding_model=embedder.model_name,
                model_revision=embedder.model_revision, dim=embedder.dim, cfg=cfg,
                fingerprint=index_fingerprint(cfg, embedder.model_name, embedder.model_revision, embedder.dim),
                location=target.location).drop()
    return _open(target, collection, cfg, embedder, create=True)


def write_own_chunks(store: ArtifactStore, spec: WorkerWrite, chunk_set: ChunkSet, embedding_sha: str,
                     embedder, previous_chunk_set_sha: str | None) -> bool:  # noqa: ANN001
    """An ingest worker's write of its own file's chunks into the server; False when there was nothing to write
    (the catalog's previous version of this document holds the same chunks)."""
    from stages.index.records import index_records

    if previous_chunk_set_sha:
        try:
            previous = store.get(f"chunk_set.v1:{previous_chunk_set_sha}", ChunkSet)
            if {c.chunk_id for c in previous.chunks} == {c.chunk_id for c in chunk_set.chunks}:
                return False
        except CiteboundError:
            pass  # an unreadable previous version: write this one
    if not chunk_set.chunks:
        return False
    index = _open(IndexTarget("milvus", spec.location), spec.collection, spec.index_cfg, embedder, create=False)
    index.upsert(index_records(chunk_set.chunks, spec.index_cfg), _vectors(store, embedding_sha),
                 scope=scope_of(chunk_set))
    return True


def write_index(
    store: ArtifactStore,
    load_set: Callable[[str], ChunkSet],
    catalog: Catalog,
    previous: IndexManifest | None,
    previous_ref: ArtifactRef | None,
    cfg: IndexConfig,
    embedder_name: str,
    target: IndexTarget,
    *,
    written: frozenset[str] = frozenset(),
    fresh: bool = False,
    full: bool = False,
    previous_is_current: bool = False,
    identity=None,  # noqa: ANN001 - the model the stored vectors were made by (default: the named embedder's)
    discard: frozenset[str] = frozenset(),
) -> dict[str, object]:
    """Bring the target's index to ``catalog``; returns the manifest fields that say where it is.

    Incremental when the previous index is on the same backend and current (``previous_is_current``): chunk sets
    that left the catalog are deleted (their ids still used by another document stay), new ones written, except
    those a worker already wrote (``written``, pre-rename chunk set shas). ``fresh``: a collection prepared empty
    in this run (nothing to delete). Otherwise, or with ``full``, everything is rebuilt from the stored vectors.
    ``discard``: chunk sets a worker wrote that the catalog did not take (a duplicate's): their rows are deleted.
    """
    from flows.backends import get_embedder
    from stages.index.faiss_backend import FaissBm25Index
    from stages.index.records import index_records

    embedder = identity or get_embedder(embedder_name)
    wanted = [e.chunk_set_sha256 for e in catalog.entries]
    emb_of = {e.chunk_set_sha256: e.embedding_set_sha256 for e in catalog.entries}
    incremental = not full and (previous_is_current or fresh)
    old = set(previous.chunk_set_sha256s) if (incremental and previous is not None and not fresh) else set()
    wanted_set = set(wanted)
    gone = [sha for sha in (previous.chunk_set_sha256s if previous is not None and incremental else ())
            if sha not in wanted_set]
    new = [sha for sha in wanted if sha not in old and load_set(sha).chunks]

    def write_sets(backend, shas: Sequence[str], parallel: int = 1) -> None:  # noqa: ANN001
        def one(sha: str) -> None:
            chunk_set = load_set(sha)
            backend.upsert(index_records(chunk_set.chunks, cfg), _vectors(store, emb_of[sha]), scope=scope_of(chunk_set))

        if parallel > 1 and len(shas) > 1:
            with ThreadPoolExecutor(max_workers=parallel) as pool:
                list(pool.map(one, shas))
        else:
            for sha in shas:
                one(sha)

    def delete_gone(backend) -> None:  # noqa: ANN001
        if not gone and not discard:
            return
        live = {c.chunk_id for sha in wanted for c in load_set(sha).chunks}
        for sha in [*gone, *sorted(discard)]:
            chunk_set = load_set(sha)
            doomed = [c.chunk_id for c in chunk_set.chunks if c.chunk_id not in live]
            if doomed:
                backend.delete(doomed, scope=scope_of(chunk_set))

    if target.backend == "faiss":
        if incremental and previous_ref is not None and not fresh:
            backend = load_index(str(store.root), previous_ref, embedder_name).writer()
            delete_gone(backend)
            write_sets(backend, new)
        else:
            chunks = [c for sha in wanted for c in load_set(sha).chunks]
            vecs = [_vectors(store, emb_of[sha]) for sha in wanted if load_set(sha).chunks]
            matrix = np.vstack(vecs).astype(np.float32) if vecs else np.zeros((0, embedder.dim), np.float32)
            backend = FaissBm25Index.build(chunks, matrix, embedding_model=embedder.model_name,
                                           model_revision=embedder.model_revision, cfg=cfg)
        blobs = tuple(sorted((role, store.put_blob(data, suffix=f".{role}")) for role, data in backend.to_blobs().items()))
        return {"backend": "faiss", "blobs": blobs}

    collection = collection_name(store.root)
    if incremental:
        backend = _open(target, collection, cfg, embedder, create=False)
        delete_gone(backend)
        write_sets(backend, [sha for sha in new if sha not in written], SERVER_WRITERS if target.is_server else 1)
    else:
        backend = fresh_collection(target, collection, cfg, embedder)
        write_sets(backend, [sha for sha in wanted if load_set(sha).chunks], SERVER_WRITERS if target.is_server else 1)
    backend.flush()  # once per update: what the workers and this step wrote becomes indexed segments
    return {"backend": "milvus", "location": target.location, "collection": collection, "blobs": ()}



def build_backend(chunks: Sequence, vectors: np.ndarray, *, target: IndexTarget, collection: str, cfg: IndexConfig,
                  embedding_model: str, model_revision: str):  # noqa: ANN201 - an IndexBackend
    """An index over ``chunks`` (rows of ``vectors``) on ``target``, outside any store: FAISS in memory, or a fresh
    Milvus ``collection`` (the evaluation corpora and the benches build theirs here)."""
    from stages.index.faiss_backend import FaissBm25Index
    from stages.index.records import index_records

    vectors = np.asarray(vectors, dtype=np.float32)
    if target.backend == "faiss":
        return FaissBm25Index.build(chunks, vectors, embedding_model=embedding_model, model_revision=model_revision,
                                    cfg=cfg)
    identity = _Identity(embedding_model, model_revision, int(vectors.shape[1]))
    fresh_collection(target, collection, cfg, identity)
    by_scope: dict[tuple[str, str], list[int]] = {}
    codes: dict[tuple[str, str], set[str]] = {}
    for i, chunk in enumerate(chunks):
        pair = (chunk.provenance.tenant_id, chunk.provenance.project_id)
        by_scope.setdefault(pair, []).append(i)
        codes.setdefault(pair, set()).add(chunk.provenance.doc_code)
    index = _open(target, collection, cfg, identity, create=False,
                  doc_codes={pair: frozenset(c) for pair, c in codes.items()})
    for (tenant, project), rows in by_scope.items():
        scope = IndexScope(tenant_id=tenant, project_id=project)
        for start in range(0, len(rows), 2000):
            part = rows[start:start + 2000]
            index.upsert(index_records([chunks[i] for i in part], cfg), vectors[part], scope=scope)
    index.flush()
    return index


@dataclass(frozen=True)
class _Identity:
    model_name: str
    model_revision: str
    dim: int


def stored_model(store: ArtifactStore, catalog: Catalog) -> _Identity:
    """The model the catalog's stored vectors were made by (all of them: one index holds one model's vectors)."""
    from contracts.errors import IndexMismatchError

    models = {(emb.embedding_model, emb.model_revision, emb.dim) for emb in (
        store.get(f"embedding_set.v1:{e.embedding_set_sha256}", EmbeddingSet) for e in catalog.entries)}
    if len(models) != 1:
        raise IndexMismatchError(f"the stored vectors come from {len(models)} models ({sorted(models)}): re-ingest "
                                 "with one embedder before rebuilding the index")
    return _Identity(*models.pop())
