"""Retrieval hand-offs: what a query found (RetrievalResult) and what a generator may see (ContextPack)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract
from contracts.ingest import Chunk, Origin
from contracts.provisions import SuccessorNote

__all__ = [
    "QueryIntent",
    "SectionRef",
    "QueryAnalysis",
    "ResultMetadata",
    "RetrievedItem",
    "RetrievalResult",
    "ContextPack",
]

QueryIntent = Literal["definition", "punishment", "procedure", "scope", "general"]


class SectionRef(Contract):
    """An explicit reference in a query: "IPC 420" -> (IPC, 420); "Article 21" -> (None, 21, article)."""

    doc_code: str | None = None
    section: str
    level: Literal["section", "article"] = "section"


class QueryAnalysis(Contract):
    intent: QueryIntent = "general"
    keywords: tuple[str, ...] = ()
    section_refs: tuple[SectionRef, ...] = ()
    expansions: tuple[str, ...] = ()
    acts: tuple[str, ...] = ()
    """Acts the query names, with or without a section ("under the Penal Code" -> "IPC")."""
    qualifiers: tuple[str, ...] = ()
    """Qualifying provisions the query asks about: attempt, abetment, preparation, conspiracy, presumption."""


class ResultMetadata(Contract):
    filename: str
    page: int
    page_end: int
    section_id: str | None = None
    section_title: str | None = None
    doc_hash: str
    doc_code: str
    chunk_id: str
    origin: Origin
    ocr_confidence: float | None = None
    char_start: int
    char_end: int
    tenant_id: str
    project_id: str
    flags: tuple[str, ...] = ()


class RetrievedItem(Contract):
    """One hit. ``source_id`` is the chunk's semantic id; ``score`` the fused rank score; ``confidence`` in [0,1].

    ``content_snippet`` is the chunk's full text (chunks are small), so that a ContextPack can be
    rebuilt from a stored RetrievalResult alone and ``citebound validate`` can check against it.
    """

    source_id: str
    content_snippet: str
    score: float
    confidence: float = Field(ge=0.0, le=1.0)
    rank: int = Field(ge=1)
    metadata: ResultMetadata
    matched_by: tuple[Literal["dense", "bm25", "section_ref", "rerank"], ...] = ()
    """The rankings that found it; "rerank": its place and confidence come from ``stages.retrieval.rerank``."""


class RetrievalResult(Contract):
    kind: Literal["retrieval_result.v2"] = "retrieval_result.v2"
    query: str
    tenant_id: str
    project_id: str
    top_k: int
    mode: Literal["hybrid", "dense", "bm25"] = "hybrid"
    results: tuple[RetrievedItem, ...]
    query_analysis: QueryAnalysis
    index_sha256: str | None = None


class ContextPack(Contract):
    """Exactly what a generator may see and cite. ``sources`` are the only ids an answer may cite."""

    kind: Literal["context_pack.v3"] = "context_pack.v3"
    query: str
    query_analysis: QueryAnalysis
    context_text: str
    sources: tuple[str, ...]
    chunks: tuple[Chunk, ...]
    confidence: float = Field(ge=0.0, le=1.0)
    quarantined: tuple[str, ...] = ()
    """Semantic ids retrieved but held back (e.g. injection suspected): never citable."""
    side_by_side: tuple[str, ...] = ()
    """Semantic ids of close provisions (``stages.retrieval.context``): no single one is the answer, so the answer shows
    each, with the condition that separates it. Empty when one provision stands out. Also the provisions of every
    code that has the section a question names by its bare number ("What is section 302?"), each labelled."""
    successors: tuple[SuccessorNote, ...] = ()
    """The pack's older provisions that a successor map carries on into a newer code (``stages.provisions.successors``)."""
    fetched: tuple[str, ...] = ()
    """Semantic ids of successors' chunks fetched into the pack (not retrieved): citable evidence, checked like any
    other, for the line that names a successor; not given to the generator, which answers the question from what
    retrieval found."""
