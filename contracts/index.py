"""The persisted search index: which chunk sets it covers, and which model/metric built its vectors."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract

__all__ = ["EmbeddingSet", "IndexManifest"]


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
