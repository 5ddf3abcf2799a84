"""The persisted search index: which chunk sets it covers, which model/metric built its vectors, and where it
lives (FAISS + BM25 blobs in the store, or a Milvus collection); the scope every index read and write names."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from contracts._base import Contract
from contracts.ingest import Chunk

__all__ = ["EmbeddingSet", "IndexManifest", "IndexRecord", "IndexScope", "IndexStats", "IndexBackendName",
           "IndexView", "ViewDocument"]

IndexBackendName = Literal["faiss", "milvus"]
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class EmbeddingSet(Contract):
    """Vectors for one ChunkSet, stored as a float32 .npy blob in chunk order."""

    kind: Literal["embedding_set.v1"] = "embedding_set.v1"
    chunk_set_sha256: str
    embedding_model: str
    model_revision: str
    dim: int = Field(gt=0)
    normalized: bool
    content_sha256s: tuple[str, ...]
    vectors_blob: str
    embed_config_sha256: str | None = None
    """config_sha256 of the EmbedConfig that made the vectors (title mixing changes them): reuse these
    vectors as an embedding cache only when it matches the current EmbedConfig."""


class IndexManifest(Contract):
    """A built index: the chunk sets it covers and where its vectors and BM25 postings are.

    ``backend="faiss"``: FAISS + BM25 blobs in the store (``blobs``), immutable, one per manifest.
    ``backend="milvus"``: a live collection (``collection``) on a Milvus server or milvus-lite database
    (``location``: the URI without any token); ``blobs`` is empty. v1 manifests read as FAISS ones.
    """

    kind: Literal["index_manifest.v2"] = "index_manifest.v2"
    embedding_model: str
    model_revision: str
    dim: int = Field(gt=0)
    metric: Literal["inner_product"] = "inner_product"
    normalized: bool = True
    index_type: Literal["flat", "hnsw"] = "flat"
    n_vectors: int = Field(ge=0)
    chunk_set_sha256s: tuple[str, ...]
    chunk_sets_sha256: str
    blobs: tuple[tuple[str, str], ...] = ()
    """(role, blob sha256) pairs, e.g. ("faiss", ...), ("bm25", ...), ("ids", ...)."""
    backend: IndexBackendName = "faiss"
    location: str | None = None
    """Where a milvus index lives: ``http://host:port`` or a milvus-lite ``.db`` path (never a token)."""
    collection: str | None = None
    """The Milvus collection holding the chunks (``backend="milvus"``)."""
    doc_codes: tuple[tuple[str, str, str], ...] = ()
    """(tenant, project, doc code) of every document in the index, sorted: what retrieval resolves act names
    against without scanning a remote collection."""


class IndexScope(Contract):
    """Which chunks an index read or write may touch: one tenant's project, optionally narrowed.

    Every method of the ``IndexBackend`` port takes one, and no method has a default for it: there is no
    code path that searches, fetches, writes or deletes without a tenant and a project. ``doc_codes``
    (case-insensitive) and the page bounds narrow further; they never widen.

    >>> scope = IndexScope(tenant_id="t1", project_id="p1")
    >>> scope.admits_location("t1", "p1", "IPC", 3, 3) and not scope.admits_location("t2", "p1", "IPC", 3, 3)
    True
    """

    tenant_id: str = Field(min_length=1, max_length=256)
    project_id: str = Field(min_length=1, max_length=256)
    doc_codes: tuple[str, ...] = ()
    page_min: int | None = None
    page_max: int | None = None

    @field_validator("tenant_id", "project_id")
    @classmethod
    def _printable(cls, value: str) -> str:
        if _CONTROL.search(value):
            raise ValueError("tenant and project ids may not contain control characters")
        return value

    def admits_location(self, tenant_id: str, project_id: str, doc_code: str, page: int, page_end: int) -> bool:
        """Whether a chunk at this tenant, project, doc code and page span is inside the scope."""
        if tenant_id != self.tenant_id or project_id != self.project_id:
            return False
        if self.doc_codes and doc_code.lower() not in {d.lower() for d in self.doc_codes}:
            return False
        if self.page_min is not None and page_end < self.page_min:
            return False
        return self.page_max is None or page <= self.page_max

    def unnarrowed(self) -> IndexScope:
        """The same tenant and project without doc-code or page narrowing."""
        return IndexScope(tenant_id=self.tenant_id, project_id=self.project_id)


class IndexStats(Contract):
    """What an index holds, as its backend reports it (``IndexBackend.stats``)."""

    backend: IndexBackendName
    location: str | None = None
    collection: str | None = None
    embedding_model: str
    model_revision: str
    dim: int
    index_type: str
    n_chunks: int = Field(ge=0)
    """Chunks in the whole index (every tenant)."""
    n_in_scope: int = Field(ge=0)
    """Chunks inside the scope the stats were asked for."""
    params: tuple[tuple[str, str], ...] = ()
    """(name, value) backend parameters as read back from the engine (index type, metric, graph and BM25 parameters)."""


class IndexRecord(Contract):
    """One chunk as an index keeps it: the chunk, the terms BM25 counts for it, and what retrieval asks of a
    candidate without reading its text again (the provision kinds it answers, the qualifier it is about, its
    section key). Made by ``stages.index.records.index_records``: every decision about text stays in the stages,
    so an index backend stores and searches records and decides nothing about words."""

    chunk: Chunk
    terms: tuple[str, ...]
    """BM25 terms of the chunk (section title repeated, then the text), in order, as ``stages.text`` makes them."""
    kinds: tuple[str, ...] = ()
    """``stages.retrieval.query_analysis.provision_kinds`` of the chunk, sorted."""
    qualifier: str | None = None
    section_level: str | None = None
    section_number: str | None = None


class ViewDocument(Contract):
    """One document of an index view: what to search (its chunk set and vectors) and what to call it."""

    doc_key: str
    doc_code: str
    filename: str
    chunk_set_sha256: str
    embedding_set_sha256: str


class IndexView(Contract):
    """What one (tenant, project) searches: its own documents, indexed on their own, so that no score, rank,
    id or hash it is shown moves with another tenant's data (BM25's statistics, a section reference's act,
    the index's address). Stored, so a run names (and a replay rebuilds) exactly the view it searched."""

    kind: Literal["index_view.v1"] = "index_view.v1"
    tenant_id: str
    project_id: str
    embedding_model: str
    model_revision: str
    dim: int = Field(gt=0)
    index_type: Literal["flat", "hnsw"] = "flat"
    documents: tuple[ViewDocument, ...] = ()
