"""The search index over chunks: FAISS vectors (exact flat IP, or HNSW) + BM25, with hard tenant filters.

Ids. Every chunk gets a *slot*, its position in ``SearchIndex`` (an int64 that is also its FAISS id:
chunks are added to FAISS in slot order, so FAISS's sequential ids and slots coincide and no
``IndexIDMap`` is needed). ``chunk_id`` <-> slot is our own mapping.

Removal. HNSW cannot remove vectors, so ``remove`` tombstones slots (a dead slot is excluded from every
search by the same selector that applies the tenant filter) and rebuilds the graph from the live
vectors once more than a quarter of the slots are dead. A flat index is rebuilt from its live vectors on
every ``remove`` (a memory copy; what ``IndexIDMap2.remove_ids`` costs too). ``add`` and ``remove``
return a NEW index and leave the original untouched (callers cache loaded indexes; the FAISS index is
cloned, a memory copy); BM25 is rebuilt lazily over the live chunks (its IDF depends on the whole corpus).

Filters. Tenant and project are hard filters applied *inside* both searches: a boolean mask over slots
becomes a FAISS ``IDSelectorBitmap`` passed in the search parameters, and the same mask restricts BM25
postings before ranking, so another tenant's chunk cannot be returned whatever its score. Masks and
selectors are cached per filter (tenant, project, doc codes, pages), so a query allocates nothing over
the whole corpus. With HNSW, a filter that keeps under 20% of the live slots is searched exactly over the
index's own flat storage (the selector skips the rest), because graph search under a very selective
filter can miss allowed neighbours; HNSW answers that come back short are retried the same way.

Persistence. ``to_blobs()`` returns ``{"faiss": serialize_index bytes, "bm25": npz bytes, "ids": JSON,
"params": JSON}`` with no disk access. ``params`` describes the index the way bm25s's ``params.index.json``
does, and more: the BM25 parameters its scores were computed with, the normaliser (tokenizer, stop list,
stemmer, version) that made its vocabulary, and the build-time ``IndexConfig``. ``from_blobs`` refuses,
with ``IndexMismatchError`` naming each difference, blobs built by another model, revision or dimension,
or whose FAISS build ``params`` differ from what this code would build under the given config
(``stages.index.saved_params`` writes and compares ``params``). A BM25 side saved under another normaliser
or BM25 parameters is not loaded but rebuilt from the chunks (a vocabulary made by another stemmer silently
misses every query term it stems differently); the vectors are kept. ``hnsw_ef_search`` is a search-time
setting and is taken from the given config.

>>> from tests.fakes import HashEmbedder  # doctest: +SKIP
>>> index = SearchIndex.build(chunks, embedder.embed([c.text for c in chunks]), embedding_model=embedder.model_name,
...                           model_revision=embedder.model_revision, cfg=IndexConfig())  # doctest: +SKIP
>>> assert len(index.chunks) == len(chunks)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import faiss
import numpy as np

from contracts.config import IndexConfig
from contracts.errors import ContractViolationError, IndexMismatchError, StageInvariantError
from contracts.ingest import Chunk
from stages.index.bm25 import LexicalIndex
from stages.index.records import lexical_text, section_key
from stages.index.saved_params import check_params, index_params
from stages.ports import Embedder
from stages.retrieval.query_analysis import provision_kinds, qualifier_of

__all__ = ["SearchIndex", "SearchFilter", "section_key"]

STAGE_VERSION = "index.v1"

_HNSW_REBUILD_DEAD_FRACTION = 0.25
_HNSW_EXACT_BELOW_FRACTION = 0.20
_FILTER_CACHE_SIZE = 32


@dataclass(frozen=True)
class SearchFilter:
    """Which chunks a search may return. tenant/project are mandatory; the rest narrow further."""

    tenant_id: str
    project_id: str
    doc_codes: tuple[str, ...] = ()
    page_min: int | None = None
    page_max: int | None = None


@dataclass
class _CompiledFilter:
    mask: np.ndarray  # bool over slots
    lexical_mask: np.ndarray  # bool over BM25 documents
    bitmap: np.ndarray  # packed mask; must outlive the selector that points into it
    selector: faiss.IDSelectorBitmap
    count: int
    everything: bool  # the filter keeps every vector FAISS holds: search without a selector (faster HNSW)


class SearchIndex:
    """FAISS + BM25 over chunks with our own slot ids; see the module docstring for ids, removal and filters."""

    def __init__(
        self,
        *,
        embedding_model: str,
        model_revision: str,
        dim: int,
        cfg: IndexConfig,
        index_type: str,
        faiss_index: faiss.Index,
        slots: list[Chunk | None],
    ) -> None:
        self.embedding_model = embedding_model
        self.model_revision = model_revision
        self.dim = dim
        self.cfg = cfg
        self.index_type = index_type
        self._faiss = faiss_index
        self._slots = slots
        self._lexical: LexicalIndex | None = None
        self._reindex_metadata()

    # ----------------------------------------------------------------- construction
    @classmethod
    def build(
        cls,
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        *,
        embedding_model: str,
        model_revision: str,
        cfg: IndexConfig,
    ) -> SearchIndex:
        vectors = _as_matrix(vectors, len(chunks))
        dim = int(vectors.shape[1])
        if dim <= 0:
            raise ContractViolationError("cannot build an index without a vector dimension (pass (0, dim) vectors)")
        _check_unique(chunks)
        index = cls(
            embedding_model=embedding_model,
            model_revision=model_revision,
            dim=dim,
            cfg=cfg,
            index_type=cfg.index_type,
            faiss_index=_new_faiss(dim, cfg),
            slots=[],
        )
        index._add_in_place(chunks, vectors)
        return index

    def _copy(self) -> SearchIndex:
        twin = SearchIndex(
            embedding_model=self.embedding_model,
            model_revision=self.model_revision,
            dim=self.dim,
            cfg=self.cfg,
            index_type=self.index_type,
            faiss_index=faiss.clone_index(self._faiss),
            slots=list(self._slots),
        )
        twin._lexical = self._lexical
        return twin

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> SearchIndex:
        """A new index with these chunks added (rows of ``vectors`` in the same order); ``self`` is unchanged.

        Chunk ids already present are skipped (re-ingesting the same chunks is a no-op).
        """
        twin = self._copy()
        twin._add_in_place(chunks, vectors)
        return twin

    def _add_in_place(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        vectors = _as_matrix(vectors, len(chunks))
        if len(chunks) and vectors.shape[1] != self.dim:
            raise IndexMismatchError(f"vectors have dimension {vectors.shape[1]}, the index {self.dim}")
        _check_unique(chunks)
        new_rows = [i for i, c in enumerate(chunks) if c.chunk_id not in self._slot_of]
        if new_rows:
            self._faiss.add(np.ascontiguousarray(vectors[new_rows]))
            self._slots.extend(chunks[i] for i in new_rows)
            if self._faiss.ntotal != len(self._slots):
                raise StageInvariantError("FAISS ids and slots went out of step")
            self._lexical = None
            self._reindex_metadata()

    def with_chunks(self, chunks: Iterable[Chunk]) -> SearchIndex:
        """A new index whose slots for these chunk ids hold these chunk objects (same id = same text and
        provenance, so the vectors and BM25 postings stay; a renamed semantic id or new flags are what change).
        Unknown ids are ignored; ``self`` is unchanged."""
        changed = {self._slot_of[c.chunk_id]: c for c in chunks
                   if c.chunk_id in self._slot_of and self._slots[self._slot_of[c.chunk_id]] != c}
        if not changed:
            return self
        twin = self._copy()
        for slot, chunk in changed.items():
            twin._slots[slot] = chunk
        twin._reindex_metadata()
        return twin

    def remove(self, chunk_ids: Iterable[str]) -> SearchIndex:
        """A new index without these chunks (unknown ids are ignored); ``self`` is unchanged."""
        doomed = {self._slot_of[c] for c in chunk_ids if c in self._slot_of}
        if not doomed:
            return self
        twin = self._copy()
        for slot in doomed:
            twin._slots[slot] = None
        dead = sum(1 for c in twin._slots if c is None)
        if twin.index_type == "flat" or dead > _HNSW_REBUILD_DEAD_FRACTION * len(twin._slots):
            twin._compact()
        twin._lexical = None
        twin._reindex_metadata()
        return twin

    def _compact(self) -> None:
        live = [s for s, c in enumerate(self._slots) if c is not None]
        vectors = self.vectors_of(live)
        index = _new_faiss(self.dim, _stored_type_cfg(self))
        index.add(vectors)
        self._faiss = index
        self._slots = [self._slots[s] for s in live]

    # ----------------------------------------------------------------- persistence
    def to_blobs(self) -> dict[str, bytes]:
        ids = {
            "embedding_model": self.embedding_model,
            "model_revision": self.model_revision,
            "dim": self.dim,
            "index_type": self.index_type,
            "chunk_ids": [c.chunk_id if c is not None else None for c in self._slots],
        }
        params = index_params(_stored_type_cfg(self), self.lexical.params)
        return {
            "faiss": faiss.serialize_index(self._faiss).tobytes(),
            "bm25": self.lexical.to_bytes(),
            "ids": json.dumps(ids, sort_keys=True, separators=(",", ":")).encode("utf-8"),
            "params": json.dumps(params, sort_keys=True, indent=1).encode("utf-8"),
        }

    @classmethod
    def from_blobs(
        cls,
        blobs: Mapping[str, bytes],
        chunks: Sequence[Chunk],
        *,
        embedding_model: str,
        model_revision: str,
        dim: int,
        cfg: IndexConfig,
        embedder: Embedder,
    ) -> SearchIndex:
        """Load an index saved by ``to_blobs``; raises IndexMismatchError if it was built by another model/dim."""
        if embedder.model_name != embedding_model or embedder.dim != dim or embedder.model_revision != model_revision:
            raise IndexMismatchError(
                f"the index was built with {embedding_model} (revision {model_revision}, dim {dim}) but the loaded "
                f"embedder is {embedder.model_name} (revision {embedder.model_revision}, dim {embedder.dim}): "
                "rebuild the index with this model"
            )
        missing = {"faiss", "bm25", "ids"} - set(blobs)
        if missing:
            raise ContractViolationError(f"index blobs lack {sorted(missing)}")
        # Saved under another normaliser or BM25 parameters: BM25 is rebuilt from the chunks (self.lexical).
        rebuild_lexical = bool(check_params(blobs, cfg))
        try:
            ids = json.loads(blobs["ids"].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ContractViolationError(f"index ids blob is not JSON: {exc}") from exc
        stored = (ids.get("embedding_model"), ids.get("model_revision"), ids.get("dim"))
        if stored != (embedding_model, model_revision, dim):
            raise IndexMismatchError(
                f"index blobs were built with {stored}, the manifest says {(embedding_model, model_revision, dim)}"
            )
        faiss_index = faiss.deserialize_index(np.frombuffer(blobs["faiss"], dtype=np.uint8))
        if faiss_index.d != dim:
            raise IndexMismatchError(f"stored FAISS index has dimension {faiss_index.d}, expected {dim}")
        by_id = {c.chunk_id: c for c in chunks}
        wanted = [cid for cid in ids["chunk_ids"] if cid is not None]
        absent = [cid for cid in wanted if cid not in by_id]
        if absent:
            raise ContractViolationError(f"{len(absent)} indexed chunks were not supplied, e.g. {absent[0][:12]}")
        extra = set(by_id) - set(wanted)
        if extra:
            raise ContractViolationError(f"{len(extra)} supplied chunks are not in the index")
        slots = [by_id[cid] if cid is not None else None for cid in ids["chunk_ids"]]
        if faiss_index.ntotal != len(slots):
            raise ContractViolationError(f"FAISS holds {faiss_index.ntotal} vectors for {len(slots)} slots")
        index = cls(
            embedding_model=embedding_model,
            model_revision=model_revision,
            dim=dim,
            cfg=cfg,
            index_type=ids["index_type"],
            faiss_index=faiss_index,
            slots=slots,
        )
        if rebuild_lexical:
            return index
        lexical = LexicalIndex.from_bytes(blobs["bm25"])
        if lexical.n_docs != len(index._lexical_slots):
            raise ContractViolationError(f"BM25 holds {lexical.n_docs} documents for {len(index._lexical_slots)} chunks")
        index._lexical = lexical
        return index

    # ----------------------------------------------------------------- views
    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The live chunks, in slot order."""
        return tuple(c for c in self._slots if c is not None)

    @property
    def n_slots(self) -> int:
        return len(self._slots)

    @property
    def doc_codes(self) -> frozenset[str]:
        return frozenset(self._doc_code_names)

    @property
    def lexical(self) -> LexicalIndex:
        if self._lexical is None:
            # Only live chunks go into BM25; _lexical_slots maps BM25 document positions back to slots.
            self._lexical = LexicalIndex.build([self._lexical_text(self._slots[s]) for s in self._lexical_slots])  # type: ignore[arg-type]
        return self._lexical

    def _lexical_text(self, chunk: Chunk) -> str:
        return lexical_text(chunk, self.cfg.bm25_title_repeat)

    def slot_of(self, chunk_id: str) -> int | None:
        """The live slot holding ``chunk_id``, or None."""
        return self._slot_of.get(chunk_id)

    def chunk_at(self, slot: int) -> Chunk:
        chunk = self._slots[slot]
        if chunk is None:
            raise StageInvariantError(f"slot {slot} was removed")
        return chunk

    def vectors_of(self, slots: Sequence[int]) -> np.ndarray:
        if len(slots) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._faiss.reconstruct(int(s)) for s in slots]).astype(np.float32, copy=False)

    def provision_kinds_at(self, slot: int) -> frozenset[str]:
        """The intents the chunk in ``slot`` answers (``stages.retrieval.query_analysis.provision_kinds``)."""
        return self._kinds[slot]

    def qualifier_at(self, slot: int) -> str | None:
        """The qualifier the chunk in ``slot`` is about ("attempt", "abetment", ...: ``qualifier_of``), or None."""
        return self._qualifiers[slot]

    def section_slots(self, number: str, level: str, doc_codes: frozenset[str] | None) -> list[int]:
        """Live slots whose section is ``number`` at ``level``, restricted to ``doc_codes`` when given."""
        hits = self._sections.get((level, number.lower()), [])
        if doc_codes is None:
            return list(hits)
        return [s for s in hits if self._slots[s].provenance.doc_code in doc_codes]  # type: ignore[union-attr]

    # ----------------------------------------------------------------- search
    def compile_filter(self, search_filter: SearchFilter) -> _CompiledFilter:
        """The mask + FAISS selector for a filter, cached (LRU) so repeated queries allocate nothing."""
        with self._filters_lock:
            cached = self._filters.get(search_filter)
            if cached is not None:
                self._filters.move_to_end(search_filter)
                return cached
        mask = self._live.copy()
        tenant = self._tenant_codes.get(search_filter.tenant_id, -1)
        project = self._project_codes.get(search_filter.project_id, -1)
        mask &= (self._tenant_of == tenant) & (self._project_of == project)
        if search_filter.doc_codes:
            wanted = {d.lower() for d in search_filter.doc_codes}
            codes = [i for name, i in self._doc_code_names.items() if name.lower() in wanted]
            mask &= np.isin(self._doc_code_of, np.asarray(codes, dtype=np.int32))
        if search_filter.page_min is not None:
            mask &= self._page_end_of >= search_filter.page_min
        if search_filter.page_max is not None:
            mask &= self._page_of <= search_filter.page_max
        bitmap = np.packbits(mask, bitorder="little")
        compiled = _CompiledFilter(
            mask=mask,
            lexical_mask=mask[self._lexical_slots],
            bitmap=bitmap,
            selector=faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bitmap)),
            count=int(mask.sum()),
            everything=bool(mask.all()),
        )
        with self._filters_lock:
            self._filters[search_filter] = compiled
            if len(self._filters) > _FILTER_CACHE_SIZE:
                self._filters.popitem(last=False)
        return compiled

    def doc_codes_in(self, allowed: _CompiledFilter) -> frozenset[str]:
        """The doc codes of the live chunks a compiled filter keeps."""
        names = {i: name for name, i in self._doc_code_names.items()}
        return frozenset(names[int(c)] for c in np.unique(self._doc_code_of[allowed.mask]) if c >= 0)

    def dense_search(self, query_vector: np.ndarray, k: int, allowed: _CompiledFilter) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (slots, inner products) among the allowed slots, best first."""
        if allowed.count == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        k = min(k, allowed.count)
        query = np.ascontiguousarray(query_vector, dtype=np.float32).reshape(1, self.dim)
        if self.index_type == "hnsw":
            if allowed.count >= _HNSW_EXACT_BELOW_FRACTION * self._n_live:
                params = faiss.SearchParametersHNSW(
                    sel=None if allowed.everything else allowed.selector, efSearch=max(self.cfg.hnsw_ef_search, k)
                )
                scores, ids = self._faiss.search(query, k, params=params)
                if int((ids[0] >= 0).sum()) >= k:
                    return ids[0].astype(np.int64), scores[0]
            # Exact search over the HNSW's own flat storage, skipping every slot the filter excludes.
            scores, ids = self._faiss.storage.search(query, k, params=faiss.SearchParameters(sel=allowed.selector))
        elif allowed.everything:
            scores, ids = self._faiss.search(query, k)
        else:
            scores, ids = self._faiss.search(query, k, params=faiss.SearchParameters(sel=allowed.selector))
        found = ids[0] >= 0
        return ids[0][found].astype(np.int64), scores[0][found]

    def lexical_search(self, terms: Sequence[str], k: int, allowed: _CompiledFilter) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (slots, BM25 scores) among the allowed slots, best first."""
        docs, scores = self.lexical.search(terms, k, allowed=allowed.lexical_mask)
        return self._lexical_slots[docs], scores

    # ----------------------------------------------------------------- internals
    def _reindex_metadata(self) -> None:
        self._slot_of: dict[str, int] = {}
        self._tenant_codes: dict[str, int] = {}
        self._project_codes: dict[str, int] = {}
        self._doc_code_names: dict[str, int] = {}
        self._sections: dict[tuple[str, str], list[int]] = {}
        n = len(self._slots)
        self._kinds: list[frozenset[str]] = [frozenset()] * n
        self._qualifiers: list[str | None] = [None] * n
        self._live = np.zeros(n, dtype=bool)
        self._tenant_of = np.full(n, -1, dtype=np.int32)
        self._project_of = np.full(n, -1, dtype=np.int32)
        self._doc_code_of = np.full(n, -1, dtype=np.int32)
        self._page_of = np.zeros(n, dtype=np.int32)
        self._page_end_of = np.zeros(n, dtype=np.int32)
        for slot, chunk in enumerate(self._slots):
            if chunk is None:
                continue
            p = chunk.provenance
            self._slot_of[chunk.chunk_id] = slot
            self._live[slot] = True
            self._tenant_of[slot] = self._tenant_codes.setdefault(p.tenant_id, len(self._tenant_codes))
            self._project_of[slot] = self._project_codes.setdefault(p.project_id, len(self._project_codes))
            self._doc_code_of[slot] = self._doc_code_names.setdefault(p.doc_code, len(self._doc_code_names))
            self._page_of[slot] = p.page
            self._page_end_of[slot] = p.page_end
            if p.section_id:
                self._sections.setdefault(section_key(p.section_id, p.doc_code), []).append(slot)
            self._kinds[slot] = provision_kinds(chunk.text, p.section_title)
            self._qualifiers[slot] = qualifier_of(p.section_title)
        self._lexical_slots = np.flatnonzero(self._live).astype(np.int64)
        self._n_live = int(self._live.sum())
        self._filters: OrderedDict[SearchFilter, _CompiledFilter] = OrderedDict()
        self._filters_lock = threading.Lock()


def _new_faiss(dim: int, cfg: IndexConfig) -> faiss.Index:
    if cfg.index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, cfg.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = cfg.hnsw_ef_construction
        index.hnsw.efSearch = cfg.hnsw_ef_search
        return index
    return faiss.IndexFlatIP(dim)


def _stored_type_cfg(index: SearchIndex) -> IndexConfig:
    """The index's config with the type it actually has (a loaded index keeps the type it was stored as)."""
    return index.cfg.model_copy(update={"index_type": index.index_type})


def _as_matrix(vectors: np.ndarray, n: int) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise ContractViolationError(f"expected ({n}, dim) vectors, got shape {vectors.shape}")
    return vectors


def _check_unique(chunks: Sequence[Chunk]) -> None:
    ids = [c.chunk_id for c in chunks]
    if len(set(ids)) != len(ids):
        raise ContractViolationError("duplicate chunk_id in one batch of chunks")
