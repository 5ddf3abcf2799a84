"""Back-end protocols the stages depend on. Vendor classes live in ``stages.adapters`` (the index's default,
FAISS + BM25, in ``stages.index.faiss_backend``); fakes in tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from contracts.generation import Generation, GenerationRequest
from contracts.index import IndexRecord, IndexScope, IndexStats
from contracts.ingest import Chunk
from contracts.questions import CompletionRequest
from contracts.verifier import VerifierPair

__all__ = ["Embedder", "Reranker", "LLM", "TextGenerator", "OcrEngine", "OcrPage", "Verifier", "IndexBackend", "IndexHits", "IndexedChunk"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of shape (len(texts), dim)."""

    @property
    def model_name(self) -> str: ...

    @property
    def model_revision(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class LLM(Protocol):
    """A stateless, untrusted text generator. Nothing it returns is trusted until validated.

    It is given a typed request (the question, the evidence items with their citable ids and texts, the
    policy) and renders what it needs from it; it returns its raw text and the prompt it sent, if any.
    """

    @property
    def name(self) -> str: ...

    def generate(self, request: GenerationRequest) -> Generation: ...


@runtime_checkable
class TextGenerator(Protocol):
    """A text generator asked to make data (training questions), not to answer: it gets its messages, a
    temperature and a seed, and returns its raw text. Nothing it writes is trusted until a rule or a person
    has checked it."""

    @property
    def name(self) -> str: ...

    def complete(self, request: CompletionRequest) -> Generation: ...


class OcrPage(Protocol):
    text: str
    confidence: float | None


@runtime_checkable
class Reranker(Protocol):
    """Scores (question, passage) pairs: the probability that each passage is the one the question asks about.

    ``ranks`` are the passages' 1-based places in retrieval's fused list (what retrieval already knew; a
    reranker may weigh it in). ``model`` identifies what decides the scores (it goes into stage versions and
    cache keys); ``pool`` is how many head candidates the reranker reads."""

    @property
    def model(self) -> str: ...

    @property
    def pool(self) -> int: ...

    def score(self, question: str, passages: Sequence[str], ranks: Sequence[int]) -> tuple[float, ...]: ...


@runtime_checkable
class OcrEngine(Protocol):
    """Reads the text of one rendered page image (PNG bytes)."""

    def ocr_png(self, png: bytes, *, lang: str = "eng") -> tuple[str, float | None]: ...


@dataclass(frozen=True)
class IndexedChunk:
    """A chunk an index returned, with what retrieval reads of a candidate (the ``IndexRecord`` annotations).

    ``key`` is the backend's own integer id for the chunk (FAISS: its slot; Milvus: its primary key), stable
    for the life of the loaded index; equal scores are ordered by it."""

    key: int
    chunk: Chunk
    kinds: frozenset[str]
    qualifier: str | None


@dataclass(frozen=True)
class IndexHits:
    """Hits of one search, best first: ``keys`` (int64) and ``scores`` (float32) aligned with ``entries``."""

    keys: np.ndarray
    scores: np.ndarray
    entries: tuple[IndexedChunk, ...]

    @classmethod
    def empty(cls) -> IndexHits:
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), ())

    def __len__(self) -> int:
        return len(self.entries)

    def best(self, k: int) -> IndexHits:
        """The ``k`` best hits, equal scores in chunk id order. An engine orders ties its own way (FAISS by slot,
        i.e. by when a chunk was added; Milvus by its key), so two chunks of the same text (a document ingested
        twice) came first on one backend and second on the other; a backend asks its engine for a few more than
        ``k`` (``TIE_MARGIN``) and keeps these, so every backend ranks them alike."""
        order = sorted(range(len(self.entries)), key=lambda i: (-float(self.scores[i]), self.entries[i].chunk.chunk_id))
        order = np.asarray(order[:k], dtype=np.int64)
        return IndexHits(np.asarray(self.keys)[order], np.asarray(self.scores)[order],
                         tuple(self.entries[i] for i in order))


TIE_MARGIN = 8
"""How many hits past ``k`` a backend asks its engine for, so ties across the cut are settled by ``IndexHits.best``."""


@runtime_checkable
class IndexBackend(Protocol):
    """Where chunks are kept and searched: FAISS + BM25 in the store (the default), or a Milvus collection.

    Every method takes ``scope`` (an ``IndexScope``: tenant and project, optionally doc codes and pages) as a
    required keyword without a default: no read, write or delete exists without one. Reads return only chunks
    inside the scope, the filter applied inside the engine's search (never after it, so a top-k is never
    filled by another tenant's chunks and then emptied); writes refuse records outside it. Scores: dense = inner
    product of normalised vectors; lexical = BM25 (k1 1.2, b 0.75) over ``IndexRecord.terms``; hybrid = the
    engine's reciprocal rank fusion of both (``1 / (rrf_k + rank)`` summed).
    """

    @property
    def name(self) -> str: ...

    @property
    def embedding_model(self) -> str: ...

    @property
    def model_revision(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def upsert(self, records: Sequence[IndexRecord], vectors: np.ndarray, *, scope: IndexScope) -> int: ...

    def delete(self, chunk_ids: Sequence[str], *, scope: IndexScope) -> int: ...

    def delete_document(self, doc_hash: str, *, scope: IndexScope) -> int: ...

    def dense_search(self, vector: np.ndarray, k: int, *, scope: IndexScope) -> IndexHits: ...

    def lexical_search(self, terms: Sequence[str], k: int, *, scope: IndexScope) -> IndexHits: ...

    def hybrid_search(self, vector: np.ndarray, terms: Sequence[str], k: int, *, scope: IndexScope,
                      rrf_k: int = 60) -> IndexHits: ...

    def section_search(self, level: str, number: str, doc_codes: frozenset[str] | None, *,
                       scope: IndexScope) -> IndexHits: ...

    def vectors(self, keys: Sequence[int], *, scope: IndexScope) -> np.ndarray: ...

    def doc_codes(self, *, scope: IndexScope) -> frozenset[str]: ...

    def stats(self, *, scope: IndexScope) -> IndexStats: ...


@runtime_checkable
class Verifier(Protocol):
    """Reads typed pairs, in batches, and says how likely each passage answers its question (``answers``) or
    supports its claim (``supports``): one probability per pair, in order.

    ``name`` identifies the model (it goes into stage versions and reports). A verifier that cannot load raises
    its own ``CiteboundError``; nothing falls back to another check silently.
    """

    @property
    def name(self) -> str: ...

    def score(self, pairs: Sequence[VerifierPair]) -> tuple[float, ...]: ...
