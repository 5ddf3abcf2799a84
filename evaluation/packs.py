"""Chunks and ContextPacks built straight from the contracts, for data that arrives as passages, not files.

HaluEval's ``knowledge`` and RAGTruth's sources are scored by validating a given answer against a pack of
exactly those passages (no retrieval in between), so the suites build packs here rather than ingest. The
unit tests use the same builders (``tests/packs.py`` re-exports them): one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence

from contracts._base import sha256_text
from contracts.ingest import Chunk, ChunkProvenance
from contracts.retrieval import ContextPack, QueryAnalysis, QueryIntent

__all__ = ["make_chunk", "make_pack"]


def make_chunk(
    semantic_id: str,
    text: str,
    *,
    filename: str = "doc.pdf",
    page: int = 1,
    section_id: str | None = None,
    section_title: str | None = None,
    flags: tuple[str, ...] = (),
) -> Chunk:
    """One chunk with id ``semantic_id`` (its doc code is the id's head, as ingestion names them)."""
    doc_code = semantic_id.split("_")[0]
    return Chunk(
        semantic_id=semantic_id,
        chunk_id=sha256_text(f"{semantic_id}\n{text}"),
        content_sha256=sha256_text(text),
        text=text,
        provenance=ChunkProvenance(
            doc_hash=sha256_text(filename), filename=filename, doc_code=doc_code, page=page, page_end=page,
            char_start=0, char_end=len(text), section_id=section_id, section_title=section_title,
            origin="text_layer", tenant_id="t", project_id="p",
        ),
        flags=flags,
    )


def make_pack(
    query: str,
    chunks: Sequence[Chunk],
    *,
    intent: QueryIntent = "general",
    confidence: float = 0.9,
    quarantined: tuple[str, ...] = (),
    keywords: tuple[str, ...] = (),
    expansions: tuple[str, ...] = (),
) -> ContextPack:
    """The pack ``build_context_pack`` would hand on had retrieval returned exactly ``chunks``."""
    return ContextPack(
        query=query,
        query_analysis=QueryAnalysis(intent=intent, keywords=keywords, expansions=expansions),
        context_text="\n\n".join(f"[{c.semantic_id}]\n{c.text}" for c in chunks),
        sources=tuple(c.semantic_id for c in chunks),
        chunks=tuple(chunks),
        confidence=confidence,
        quarantined=quarantined,
    )
