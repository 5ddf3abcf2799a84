"""Index views: each (tenant, project) searches an index of its own documents, and only needs those to verify.

The store keeps one index over every tenant's documents (``index/current``, updated by each ingest). Searching
it with a tenant filter kept other tenants' chunks out of the results, but not out of the figures: BM25's
statistics (and so scores, ranks and confidences), the act a section reference resolved to and the index's
address all moved when another tenant uploaded or deleted; and loading it read every tenant's chunk sets, so
one damaged chunk set refused everyone.

A view (``contracts.index.IndexView``) names one (tenant, project)'s documents, the embedding model and the
index type; its address moves only with that scope's documents. ``view_ref`` makes it from the catalog (and
stores it: a run records the view it searched, a replay rebuilds it). ``load_view`` gives its ``IndexBackend``
(``stages.ports``; every search still names the view's ``IndexScope``):

- FAISS + BM25 (the default): the store's own index when that index holds exactly the view's documents (a
  store of one tenant and project: no rebuild), else a ``FaissBm25Index`` built in memory from the view's chunk
  sets and stored vectors, kept per process;
- Milvus (``CITEBOUND_INDEX_URI``): the store's collection itself. Its scope filter (tenant and project, inside
  every request) already keeps other tenants' chunks out of results; the chunks live in the collection, so a
  damaged chunk set in the store is not read to search it, and the view reports no damage. What the view does
  not give there: Milvus computes BM25 statistics over the collection, so lexical scores may still move with
  another tenant's data (the dense scores, act resolution and the view's address do not).

Damage. A view document whose chunk set, embedding set or vectors do not verify is left out of the view's
index and listed in ``LoadedView.damaged``; ``refuse_if_needed`` then refuses, naming the document, only the
searches that could have needed it: a document the request's filter or section reference names, one whose
stored vectors hold a chunk at least as close to the question as the k-th chunk found among the others, or
one whose vectors are damaged too (then no one can tell). Every other search of the scope is answered from
the documents that verify; other scopes never read the damaged objects at all.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from contracts import ArtifactRef, ArtifactStore, Catalog, ChunkSet, EmbeddingSet, IndexConfig, IndexManifest
from contracts.errors import (
    ArtifactCorruptError,
    ArtifactNotFoundError,
    DocumentDamagedError,
    IndexMismatchError,
)
from contracts.index import IndexScope, IndexView, ViewDocument
from contracts.retrieval import RetrievalResult
from flows.backends import get_embedder
from flows.index_backends import load_search_index
from flows.store_layout import CATALOG_POINTER, INDEX_POINTER, vectors_from_bytes

__all__ = ["DamagedDocument", "LoadedView", "view_ref", "load_view", "refuse_if_needed", "document_name"]

_VIEWS_KEPT = 8  # built views held per process (a view of a one-scope store is the store's index itself)


@dataclass(frozen=True)
class DamagedDocument:
    """A view document left out because an object it needs does not verify; ``vectors`` when those still do."""

    document: ViewDocument
    objects: tuple[str, ...]
    vectors: np.ndarray | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return document_name(self.document.doc_code, self.document.filename)


@dataclass(frozen=True)
class LoadedView:
    view: IndexView
    index: object  # an IndexBackend (stages.ports): FaissBm25Index or MilvusIndex, imported lazily
    damaged: tuple[DamagedDocument, ...] = ()


def document_name(doc_code: str, filename: str) -> str:
    """How people are told which document: ``IPC (penal_code.pdf)``."""
    return f"{doc_code} ({filename})"


def _name(kind: str, sha: str) -> str:
    return f"{kind}:{sha[:12]}"


# ------------------------------------------------------------------------------------------ the view of a scope

_refs_lock = threading.Lock()
_refs: OrderedDict[tuple[str, ...], ArtifactRef] = OrderedDict()


def _index_type(store: ArtifactStore) -> str:
    """The type the store's index is built as (an operator's choice, the same for every tenant)."""
    from flows.settings import Settings

    try:
        ref = store.get_pointer(INDEX_POINTER)
        return store.get(ref, IndexManifest).index_type if ref else Settings().index_type
    except (ArtifactCorruptError, ArtifactNotFoundError):
        return Settings().index_type


def view_ref(store: ArtifactStore, tenant: str, project: str, embedder_name: str = "minilm") -> ArtifactRef:
    """The stored view of (tenant, project) under the current catalog (made and stored on first use)."""
    cat_ref = store.get_pointer(CATALOG_POINTER)
    idx_ref = store.get_pointer(INDEX_POINTER)
    key = (str(store.root), cat_ref.sha256 if cat_ref else "", idx_ref.sha256 if idx_ref else "", tenant, project,
           embedder_name)
    with _refs_lock:
        if key in _refs:
            _refs.move_to_end(key)
            return _refs[key]
    catalog = store.get(cat_ref, Catalog) if cat_ref else Catalog()
    embedder = get_embedder(embedder_name)
    view = IndexView(
        tenant_id=tenant, project_id=project, embedding_model=embedder.model_name,
        model_revision=embedder.model_revision, dim=embedder.dim, index_type=_index_type(store),
        documents=tuple(
            ViewDocument(doc_key=e.doc_key, doc_code=e.doc_code, filename=e.filename,
                         chunk_set_sha256=e.chunk_set_sha256, embedding_set_sha256=e.embedding_set_sha256)
            for e in catalog.entries if e.tenant_id == tenant and e.project_id == project),
    )
    ref = store.put(view, stage="index_view", stage_version="index_view.v1")
    with _refs_lock:
        _refs[key] = ref
        while len(_refs) > 256:
            _refs.popitem(last=False)
    return ref


# ------------------------------------------------------------------------------------------ loading

_views_lock = threading.Lock()
_views: OrderedDict[tuple[str, str, str, str], LoadedView] = OrderedDict()


def load_view(store_root: str | Path, ref: ArtifactRef, embedder_name: str = "minilm") -> LoadedView:
    """The searchable view ``ref`` names, loaded once per process (views are immutable). A view with damage is
    not kept: ``citebound repair`` may restore the very objects it names, and the next search must see them."""
    store = ArtifactStore(store_root)
    try:  # the store's index too: a view is served from it (Milvus, or FAISS when it holds just the view's documents)
        current = store.get_pointer(INDEX_POINTER)
    except (ArtifactCorruptError, ArtifactNotFoundError):
        current = None
    key = (str(store_root), ref.sha256, embedder_name, current.sha256 if current else "")
    with _views_lock:
        if key in _views:
            _views.move_to_end(key)
            return _views[key]
    loaded = _load(store, ref, embedder_name)
    if loaded.damaged:
        return loaded
    with _views_lock:
        _views[key] = loaded
        while len(_views) > _VIEWS_KEPT:
            _views.popitem(last=False)
    return loaded


def _load(store: ArtifactStore, ref: ArtifactRef, embedder_name: str) -> LoadedView:
    from stages.index.faiss_backend import FaissBm25Index

    view = store.get(ref, IndexView)
    embedder = get_embedder(embedder_name)
    if (view.embedding_model, view.model_revision, view.dim) != (
            embedder.model_name, embedder.model_revision, embedder.dim):
        raise IndexMismatchError(
            f"the view was made for {view.embedding_model} (revision {view.model_revision}, dim {view.dim}) but the "
            f"loaded embedder is {embedder.model_name} (revision {embedder.model_revision}, dim {embedder.dim})")
    milvus = _store_index_if_milvus(store, embedder_name, load_search_index)
    if milvus is not None:
        return LoadedView(view, milvus)
    wanted = [d.chunk_set_sha256 for d in view.documents]
    shared = _store_index_if_same(store, view, wanted, embedder_name, load_search_index)
    if shared is not None:
        return LoadedView(view, shared)
    chunks: list = []
    vectors: list[np.ndarray] = []
    damaged: list[DamagedDocument] = []
    for doc in view.documents:
        these, vecs, failed = _read_document(store, doc, embedder)
        if failed:
            damaged.append(DamagedDocument(doc, failed, vecs))
        elif these:
            chunks.extend(these)
            vectors.append(vecs)
    matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, embedder.dim), np.float32)
    index = FaissBm25Index.build(chunks, matrix, embedding_model=view.embedding_model,
                              model_revision=view.model_revision, cfg=IndexConfig(index_type=view.index_type))
    return LoadedView(view, index, tuple(damaged))


def _store_index_if_milvus(store, embedder_name, load_search_index):  # noqa: ANN001, ANN202
    """The store's Milvus index (the scope filter isolates the view's tenant), when the index is on Milvus."""
    try:
        ref = store.get_pointer(INDEX_POINTER)
        manifest = store.get(ref, IndexManifest) if ref else None
    except (ArtifactCorruptError, ArtifactNotFoundError):
        return None  # a damaged manifest: build the view from its documents (FAISS, in memory) instead
    if manifest is None or manifest.backend != "milvus":
        return None
    return load_search_index(str(store.root), ref, embedder_name)


def _store_index_if_same(store, view, wanted, embedder_name, load_search_index):  # noqa: ANN001, ANN202
    """The store's own FAISS index, when it holds exactly this view's documents and loads; else None."""
    try:
        ref = store.get_pointer(INDEX_POINTER)
        manifest = store.get(ref, IndexManifest) if ref else None
        if (manifest is None or manifest.backend != "faiss" or not wanted or manifest.index_type != view.index_type
                or sorted(manifest.chunk_set_sha256s) != sorted(wanted)):
            return None
        return load_search_index(str(store.root), ref, embedder_name)
    except (ArtifactCorruptError, ArtifactNotFoundError, IndexMismatchError):
        return None  # build the view from its documents instead


def _read_document(store: ArtifactStore, doc: ViewDocument, embedder) -> tuple[tuple, np.ndarray | None, tuple[str, ...]]:  # noqa: ANN001
    """(chunks, vectors, names of the objects that failed) of one view document; each object read on its own, so
    the vectors survive a damaged chunk set (they tell whether a search needed the document)."""
    failed: list[str] = []
    chunks: tuple = ()
    vectors: np.ndarray | None = None
    try:
        chunks = store.get(f"chunk_set.v1:{doc.chunk_set_sha256}", ChunkSet).chunks
    except (ArtifactCorruptError, ArtifactNotFoundError):
        failed.append(_name("chunk_set.v1", doc.chunk_set_sha256))
    try:
        emb = store.get(f"embedding_set.v1:{doc.embedding_set_sha256}", EmbeddingSet)
    except (ArtifactCorruptError, ArtifactNotFoundError):
        failed.append(_name("embedding_set.v1", doc.embedding_set_sha256))
    else:
        if (emb.embedding_model, emb.model_revision) != (embedder.model_name, embedder.model_revision):
            raise IndexMismatchError(
                f"{document_name(doc.doc_code, doc.filename)} was embedded with {emb.embedding_model} (revision "
                f"{emb.model_revision}), the loaded embedder is {embedder.model_name}: ingest it again")
        try:
            vectors = vectors_from_bytes(store.get_blob(emb.vectors_blob))
        except (ArtifactCorruptError, ArtifactNotFoundError):
            failed.append(f"blob:{emb.vectors_blob[:12]}")
        except ValueError:
            failed.append(f"blob:{emb.vectors_blob[:12]}")
    if vectors is not None and not failed and vectors.shape[0] != len(chunks):
        failed.append(_name("embedding_set.v1", doc.embedding_set_sha256))
    return chunks, vectors, tuple(failed)


# ------------------------------------------------------------------------------------------ damage


def refuse_if_needed(loaded: LoadedView, result: RetrievalResult, cfg, embedder) -> None:  # noqa: ANN001
    """Raise DocumentDamagedError naming the damaged documents of the view this search could have needed (see
    the module docstring); return when the documents that verify answer it."""
    if not loaded.damaged:
        return
    asked_codes = {c.lower() for c in cfg.doc_codes}
    named = {c.lower() for c in result.query_analysis.acts}
    named |= {r.doc_code.lower() for r in result.query_analysis.section_refs if r.doc_code}
    candidates = [d for d in loaded.damaged if not asked_codes or d.document.doc_code.lower() in asked_codes]
    if not candidates:
        return
    query = embedder.embed([result.query])
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    scope = IndexScope(tenant_id=loaded.view.tenant_id, project_id=loaded.view.project_id,
                       doc_codes=tuple(cfg.doc_codes), page_min=cfg.page_min, page_max=cfg.page_max)
    scores = loaded.index.dense_search(query, result.top_k, scope=scope).scores
    kth = float(scores[result.top_k - 1]) if len(scores) >= result.top_k else float("-inf")
    needed = [
        d for d in candidates
        if d.document.doc_code.lower() in named or asked_codes or d.vectors is None
        or (len(d.vectors) and float(np.max(d.vectors @ query)) >= kth)
    ]
    if needed:
        raise DocumentDamagedError(tuple(d.name for d in needed),
                                   tuple(dict.fromkeys(o for d in needed for o in d.objects)))
