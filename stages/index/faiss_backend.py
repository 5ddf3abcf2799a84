"""The default ``IndexBackend``: FAISS + BM25 (``SearchIndex``) in the store, searched in process.

A thin adapter: every search is ``SearchIndex``'s own (the same filter masks and FAISS selectors, the same BM25
postings), so retrieval over it ranks exactly as before the port existed. Keys are ``SearchIndex`` slots.

Writes. ``SearchIndex`` is immutable (``add``/``remove`` return a new index) because loaded indexes are shared by
every thread of a process. This adapter's ``upsert``/``delete`` swap the ``SearchIndex`` it holds for the new one;
so a writer works on ``writer()``, a new adapter over the same (immutable) index, and never on an instance that
readers share. ``to_blobs()`` then gives what the store keeps; one writer at a time (the ingest flow's serialised
catalog update) is what FAISS files allow.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from contracts.config import IndexConfig
from contracts.errors import ContractViolationError, StageInvariantError
from contracts.index import IndexRecord, IndexScope, IndexStats
from contracts.ingest import Chunk
from stages.index.search_index import SearchFilter, SearchIndex
from stages.ports import TIE_MARGIN, Embedder, IndexedChunk, IndexHits

__all__ = ["FaissBm25Index", "rrf_fuse"]

_SCOPE_CACHE_SIZE = 64


def rrf_fuse(lists: Sequence[IndexHits], k: int, rrf_k: int) -> IndexHits:
    """Reciprocal rank fusion of hit lists: ``sum 1 / (rrf_k + rank)``, ties by key, the best ``k``.

    >>> a = IndexHits(np.array([1, 2]), np.array([0.9, 0.8], np.float32), ())
    >>> b = IndexHits(np.array([2, 3]), np.array([5.0, 4.0], np.float32), ())
    >>> [int(x) for x in rrf_fuse([a, b], k=3, rrf_k=60).keys]
    [2, 1, 3]
    """
    fused: dict[int, float] = {}
    entry_of: dict[int, IndexedChunk] = {}
    for hits in lists:
        for rank, key in enumerate(hits.keys, start=1):
            fused[int(key)] = fused.get(int(key), 0.0) + 1.0 / (rrf_k + rank)
        entry_of.update((int(key), e) for key, e in zip(hits.keys, hits.entries, strict=False))
    order = sorted(fused, key=lambda key: (-fused[key], key))[:k]
    return IndexHits(
        np.asarray(order, dtype=np.int64),
        np.asarray([fused[key] for key in order], dtype=np.float32),
        tuple(entry_of[key] for key in order) if all(key in entry_of for key in order) else (),
    )


class FaissBm25Index:
    """``IndexBackend`` over a ``SearchIndex`` (see the module docstring)."""

    name = "faiss"

    def __init__(self, index: SearchIndex) -> None:
        self._index = index
        self._entries: dict[int, IndexedChunk] = {}
        self._doc_codes: dict[IndexScope, frozenset[str]] = {}
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- construction and persistence
    @classmethod
    def build(cls, chunks: Sequence[Chunk], vectors: np.ndarray, *, embedding_model: str, model_revision: str,
              cfg: IndexConfig) -> FaissBm25Index:
        return cls(SearchIndex.build(chunks, vectors, embedding_model=embedding_model,
                                     model_revision=model_revision, cfg=cfg))

    @classmethod
    def from_blobs(cls, blobs: Mapping[str, bytes], chunks: Sequence[Chunk], *, embedding_model: str,
                   model_revision: str, dim: int, cfg: IndexConfig, embedder: Embedder) -> FaissBm25Index:
        return cls(SearchIndex.from_blobs(blobs, chunks, embedding_model=embedding_model,
                                          model_revision=model_revision, dim=dim, cfg=cfg, embedder=embedder))

    def to_blobs(self) -> dict[str, bytes]:
        return self._index.to_blobs()

    def writer(self) -> FaissBm25Index:
        """A new adapter over the same index, for writes that must not reach this (shared) instance."""
        return FaissBm25Index(self._index)

    @property
    def search_index(self) -> SearchIndex:
        return self._index

    # ----------------------------------------------------------------- identity
    @property
    def embedding_model(self) -> str:
        return self._index.embedding_model

    @property
    def model_revision(self) -> str:
        return self._index.model_revision

    @property
    def dim(self) -> int:
        return self._index.dim

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        return self._index.chunks

    # ----------------------------------------------------------------- writes
    def upsert(self, records: Sequence[IndexRecord], vectors: np.ndarray, *, scope: IndexScope) -> int:
        """Add the records' chunks that are new; swap in the chunk objects of ids already held (same id = same
        text and provenance: a renamed semantic id or new flags). Returns how many chunks were written."""
        _check_in_scope(records, scope)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(records):
            raise ContractViolationError(f"expected ({len(records)}, dim) vectors, got shape {vectors.shape}")
        new = [i for i, r in enumerate(records) if self._index.slot_of(r.chunk.chunk_id) is None]
        held = [r.chunk for r in records if self._index.slot_of(r.chunk.chunk_id) is not None]
        index = self._index.with_chunks(held) if held else self._index
        if new:
            index = index.add([records[i].chunk for i in new], vectors[new])
        self._swap(index)
        return len(records)

    def delete(self, chunk_ids: Sequence[str], *, scope: IndexScope) -> int:
        """Remove these chunks where they are inside ``scope`` (others are left alone); returns how many."""
        doomed = [cid for cid in chunk_ids if (slot := self._index.slot_of(cid)) is not None
                  and _admits(scope, self._index.chunk_at(slot))]
        if doomed:
            self._swap(self._index.remove(doomed))
        return len(doomed)

    def delete_document(self, doc_hash: str, *, scope: IndexScope) -> int:
        """Remove every chunk of the document version ``doc_hash`` inside ``scope``; returns how many."""
        ids = [c.chunk_id for c in self._index.chunks if c.provenance.doc_hash == doc_hash and _admits(scope, c)]
        return self.delete(ids, scope=scope)

    def _swap(self, index: SearchIndex) -> None:
        with self._lock:
            self._index = index
            self._entries = {}
            self._doc_codes = {}

    # ----------------------------------------------------------------- reads
    def _allowed(self, scope: IndexScope):  # noqa: ANN202 - SearchIndex's compiled filter
        return self._index.compile_filter(
            SearchFilter(scope.tenant_id, scope.project_id, tuple(scope.doc_codes), scope.page_min, scope.page_max))

    def _hits(self, slots: np.ndarray, scores: np.ndarray) -> IndexHits:
        return IndexHits(slots, scores, tuple(self._entry(int(s)) for s in slots))

    def _entry(self, slot: int) -> IndexedChunk:
        entry = self._entries.get(slot)
        if entry is None:
            index = self._index
            entry = IndexedChunk(key=slot, chunk=index.chunk_at(slot), kinds=index.provision_kinds_at(slot),
                                 qualifier=index.qualifier_at(slot))
            self._entries[slot] = entry
        return entry

    # Equal scores come out in chunk id order (IndexHits.best), as on every backend.
    def dense_search(self, vector: np.ndarray, k: int, *, scope: IndexScope) -> IndexHits:
        return self._hits(*self._index.dense_search(vector, k + TIE_MARGIN, self._allowed(scope))).best(k)

    def lexical_search(self, terms: Sequence[str], k: int, *, scope: IndexScope) -> IndexHits:
        return self._hits(*self._index.lexical_search(terms, k + TIE_MARGIN, self._allowed(scope))).best(k)

    def hybrid_search(self, vector: np.ndarray, terms: Sequence[str], k: int, *, scope: IndexScope,
                      rrf_k: int = 60) -> IndexHits:
        allowed = self._allowed(scope)
        dense = self._hits(*self._index.dense_search(vector, k + TIE_MARGIN, allowed)).best(k)
        lexical = self._hits(*self._index.lexical_search(terms, k + TIE_MARGIN, allowed)).best(k)
        return rrf_fuse([dense, lexical], k, rrf_k)

    def section_search(self, level: str, number: str, doc_codes: frozenset[str] | None, *,
                       scope: IndexScope) -> IndexHits:
        mask = self._allowed(scope).mask
        slots = [s for s in self._index.section_slots(number, level, doc_codes) if mask[s]]
        return self._hits(np.asarray(slots, dtype=np.int64), np.zeros(len(slots), dtype=np.float32))

    def vectors(self, keys: Sequence[int], *, scope: IndexScope) -> np.ndarray:
        mask = self._allowed(scope).mask
        outside = [k for k in keys if not (0 <= int(k) < mask.size and mask[int(k)])]
        if outside:
            raise StageInvariantError(f"vectors asked for slots outside the scope: {outside[:5]}")
        return self._index.vectors_of([int(k) for k in keys])

    def doc_codes(self, *, scope: IndexScope) -> frozenset[str]:
        codes = self._doc_codes.get(scope)
        if codes is None:
            codes = self._index.doc_codes_in(self._allowed(scope))
            if len(self._doc_codes) >= _SCOPE_CACHE_SIZE:
                self._doc_codes.clear()
            self._doc_codes[scope] = codes
        return codes

    def stats(self, *, scope: IndexScope) -> IndexStats:
        index = self._index
        cfg = index.cfg
        params = {"index_type": index.index_type, "metric": "inner_product",
                  **({"hnsw_m": str(cfg.hnsw_m), "hnsw_ef_construction": str(cfg.hnsw_ef_construction),
                      "hnsw_ef_search": str(cfg.hnsw_ef_search)} if index.index_type == "hnsw" else {}),
                  **{f"bm25_{k}": str(v) for k, v in index.lexical.params.items()}}
        return IndexStats(
            backend="faiss", embedding_model=index.embedding_model, model_revision=index.model_revision,
            dim=index.dim, index_type=index.index_type, n_chunks=len(index.chunks),
            n_in_scope=self._allowed(scope).count, params=tuple(sorted(params.items())),
        )


def _admits(scope: IndexScope, chunk: Chunk) -> bool:
    p = chunk.provenance
    return scope.admits_location(p.tenant_id, p.project_id, p.doc_code, p.page, p.page_end)


def _check_in_scope(records: Sequence[IndexRecord], scope: IndexScope) -> None:
    outside = [r.chunk.chunk_id for r in records if not _admits(scope, r.chunk)]
    if outside:
        raise ContractViolationError(
            f"{len(outside)} records to write lie outside the scope {scope.tenant_id}/{scope.project_id}, "
            f"e.g. chunk {outside[0][:12]}")
