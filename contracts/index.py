"""The persisted search index: which chunk sets it covers, and which model/metric built its vectors."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract

__all__ = ["EmbeddingSet", "IndexManifest", "ViewDocument", "IndexView"]


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
    """A built index: FAISS vectors + BM25 + the chunk sets they cover. Blobs are sha256 names in the store."""

    kind: Literal["index_manifest.v1"] = "index_manifest.v1"
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
