"""The ContextPack: exactly what a generator may see and cite, built from a RetrievalResult alone.

Each result becomes a Chunk again (text = ``content_snippet``, provenance from its metadata,
``content_sha256`` = sha256 of the text), so a stored RetrievalResult is enough to rebuild the pack
byte for byte. Results are taken in rank order; a result whose text was already taken is skipped; a
result flagged ``injection_suspected`` goes to ``quarantined`` (never into ``sources``) when
``policy.quarantine_flagged``; a result flagged ``front_matter`` or ``exercise`` (a table of contents, an
arrangement of sections, an exercise, an activity: ``stages.ingest.flags``) is left out whatever the policy, since
it names or asks what a document holds and answers nothing (retrieval skips those already; a stored result from
before may still hold one); chunks are added while their approximate token count (``approx_tokens``)
fits ``cfg.pack_token_budget`` (a chunk that does not fit is skipped and a smaller later one may still
fit; chunks are never cut, since a cut chunk could not be checked against its source). ``sources`` are exactly the semantic ids of the chunks in the pack, and ``context_text``
is those chunks as ``"[semantic_id]\\n<text>"`` blocks separated by blank lines. The pack's
``confidence`` is the highest confidence among its chunks (0.0 for an empty pack): the pack is as
trustworthy as its best evidence, and the generator is told to answer from that.

Close provisions (a reranked result, ``stages.retrieval.rerank``): when up to two further provisions have at least
``CLOSE_RATIO`` of the first one's confidence, no single provision is the answer. The pack then holds those
close provisions only (at most ``MAX_CLOSE`` sections, each with all its retrieved chunks), so the answer
shows them side by side, and its confidence is the sum of theirs: the probability that the asked provision
is among what is shown.

A section named by its bare number ("What is section 302?") that the pack holds in more than one code (IPC 302
and BNS 302) is not one provision either: the pack marks every chunk of that section side by side, so the
answer shows each code's provision, labelled with its code (``stages.generation.provision_labels``).

>>> from contracts import GenerationPolicy, QueryAnalysis, RetrieveConfig, RetrievalResult
>>> empty = RetrievalResult(query="q", tenant_id="t", project_id="p", top_k=5, results=(), query_analysis=QueryAnalysis())
>>> pack = build_context_pack(empty, RetrieveConfig(), GenerationPolicy())
>>> assert (pack.context_text, pack.sources, pack.confidence) == ("", (), 0.0)
"""

from __future__ import annotations

import math

from contracts._base import sha256_text
from contracts.answer import GenerationPolicy
from contracts.config import RetrieveConfig
from contracts.ingest import Chunk, ChunkProvenance
from contracts.retrieval import ContextPack, RetrievalResult, RetrievedItem
from stages.generation.provision_labels import MAX_PROVISIONS
from stages.ingest.flags import is_evidence
from stages.retrieval.rerank import CLOSE_RATIO

__all__ = ["build_context_pack", "approx_tokens", "INJECTION_FLAG"]

STAGE_VERSION = "context.v3"

MAX_CLOSE = MAX_PROVISIONS
"""Close provisions shown side by side, at most (as many as an answer labels)."""

INJECTION_FLAG = "injection_suspected"


def approx_tokens(text: str) -> int:
    """Approximate MiniLM/GPT-style token count: about four characters per token.

    >>> assert approx_tokens("abcd" * 10) == 10
    """
    return max(1, math.ceil(len(text) / 4))


def _chunk_of(item: RetrievedItem) -> Chunk:
    m = item.metadata
    return Chunk(
        semantic_id=item.source_id,
        chunk_id=m.chunk_id,
        content_sha256=sha256_text(item.content_snippet),
        text=item.content_snippet,
        provenance=ChunkProvenance(
            doc_hash=m.doc_hash,
            filename=m.filename,
            doc_code=m.doc_code,
            page=m.page,
            page_end=m.page_end,
            char_start=m.char_start,
            char_end=m.char_end,
            section_id=m.section_id,
            section_title=m.section_title,
            origin=m.origin,
            ocr_confidence=m.ocr_confidence,
            tenant_id=m.tenant_id,
            project_id=m.project_id,
        ),
        flags=m.flags,
    )


def build_context_pack(result: RetrievalResult, cfg: RetrieveConfig, policy: GenerationPolicy) -> ContextPack:
    """De-duplicated, rank-ordered, budgeted pack of the result's chunks (see the module docstring)."""
    taken: list[tuple[RetrievedItem, Chunk]] = []
    quarantined: list[str] = []
    seen_texts: set[str] = set()
    seen_ids: set[str] = set()
    used_tokens = 0
    items = sorted(result.results, key=lambda i: i.rank)
    close = _close_provisions(items)
    if close is not None:
        items = [i for i in items if _provision(i) in close]
    for item in items:
        if not is_evidence(item.metadata.flags):
            continue  # front matter, an exercise: never evidence, whatever the policy
        if INJECTION_FLAG in item.metadata.flags and policy.quarantine_flagged:
            if item.source_id not in quarantined:
                quarantined.append(item.source_id)
            continue
        text_key = " ".join(item.content_snippet.split())
        if text_key in seen_texts or item.source_id in seen_ids:
            continue
        cost = approx_tokens(item.content_snippet)
        if used_tokens + cost > cfg.pack_token_budget:
            continue
        seen_texts.add(text_key)
        seen_ids.add(item.source_id)
        used_tokens += cost
        taken.append((item, _chunk_of(item)))
    chunks = tuple(chunk for _, chunk in taken)
    side_by_side = tuple(c.semantic_id for c in chunks) if close is not None else _same_number(result, chunks)
    return ContextPack(
        query=result.query,
        query_analysis=result.query_analysis,
        context_text="\n\n".join(f"[{c.semantic_id}]\n{c.text}" for c in chunks),
        sources=tuple(c.semantic_id for c in chunks),
        chunks=chunks,
        confidence=_pack_confidence([item for item, _ in taken], close is not None),
        quarantined=tuple(quarantined),
        side_by_side=side_by_side,
    )


def _same_number(result: RetrievalResult, chunks: tuple[Chunk, ...]) -> tuple[str, ...]:
    """The chunks of each section the query names by its bare number ("section 302", no code) that the pack holds
    in two or more codes; empty when there is none."""
    bare = {r.section.upper() for r in result.query_analysis.section_refs if r.doc_code is None and r.level == "section"}
    if not bare:
        return ()
    codes: dict[str, set[str]] = {}
    for chunk in chunks:
        section = (chunk.provenance.section_id or "").upper()
        if section in bare:
            codes.setdefault(section, set()).add(chunk.provenance.doc_code.upper())
    shared = {section for section, found in codes.items() if len(found) > 1}
    return tuple(c.semantic_id for c in chunks if (c.provenance.section_id or "").upper() in shared)


def _provision(item: RetrievedItem) -> tuple[str, str]:
    return (item.metadata.doc_code, item.metadata.section_id or item.source_id)


def _close_provisions(items: list[RetrievedItem]) -> frozenset[tuple[str, str]] | None:
    """The provisions (doc code, section) close to the first result's, first included, or None when the first
    stands alone (or came from a section named in the question)."""
    if not items or "rerank" not in items[0].matched_by:
        return None  # not reranked (a section the question names, a long fact pattern, rerank off)
    best: dict[tuple[str, str], float] = {}
    for item in items:
        best.setdefault(_provision(item), item.confidence)
    first = _provision(items[0])
    close = [p for p, c in best.items() if p != first and c >= CLOSE_RATIO * best[first]][: MAX_CLOSE - 1]
    return frozenset([first, *close]) if close else None


def _pack_confidence(taken: list[RetrievedItem], side_by_side: bool) -> float:
    if not side_by_side:
        return max((item.confidence for item in taken), default=0.0)
    best: dict[tuple[str, str], float] = {}
    for item in taken:
        best.setdefault(_provision(item), item.confidence)
    return min(1.0, sum(best.values()))
