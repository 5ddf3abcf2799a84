"""A grounded answer's successor lines: for each cited provision that a successor map carries on, one line naming
the successor and citing its chunk, checked like any sentence; and each such citation's ``successors``.

Each line is checked alone, by the same validator as the answer (``check``): a line whose chunk is not among the
pack's citable sources, or that its evidence does not carry, is not added (the answer stays, and a failed
``successor_line`` check records why). A line is not added when the answer already cites the successor (an
answer to a question that asked for it).

>>> from contracts.answer import Answer
>>> from contracts.retrieval import ContextPack, QueryAnalysis
>>> empty = ContextPack(query="q", query_analysis=QueryAnalysis(), context_text="", sources=(), chunks=(), confidence=0.0)
>>> plain = Answer(query="q", status="success", answer="x [A]")
>>> with_successor_lines(plain, empty, lambda text: plain) == plain
True
"""

from __future__ import annotations

from collections.abc import Callable

from contracts.answer import Answer, CheckResult, Citation
from contracts.provisions import SuccessorNote
from contracts.retrieval import ContextPack
from stages.provisions.successors import successor_line

__all__ = ["with_successor_lines", "notes_by_chunk"]


def notes_by_chunk(pack: ContextPack) -> dict[str, SuccessorNote]:
    """Each pack chunk of an older provision (any chunk of its section, not only the one noted) -> its note."""
    by_section = {(n.code.upper(), n.section.upper()): n for n in pack.successors}
    out = {}
    for chunk in pack.chunks:
        prov = chunk.provenance
        note = by_section.get((prov.doc_code.upper(), (prov.section_id or "").upper()))
        if note is not None and chunk.semantic_id not in pack.fetched:
            out[chunk.semantic_id] = note
    return out


def _with_successors(citation: Citation, note: SuccessorNote | None, citable: frozenset[str]) -> Citation:
    if note is None or not note.successors:
        return citation
    shown = tuple(s.model_copy(update={"semantic_ids": tuple(i for i in s.semantic_ids if i in citable)})
                  for s in note.successors)
    return citation.model_copy(update={"successors": shown})


def with_successor_lines(answer: Answer, pack: ContextPack, check: Callable[[str], Answer]) -> Answer:
    """``answer`` with a checked successor line for each cited provision that has one, and every citation of such a
    provision carrying its successors; unchanged for a refusal or a pack with no successor notes."""
    if answer.status != "success" or not pack.successors:
        return answer
    notes = notes_by_chunk(pack)
    cited = {c.source_id for c in answer.citations}
    citable = frozenset(pack.sources) - frozenset(pack.quarantined)
    text, sentences, checks = answer.answer, list(answer.sentences), list(answer.checks)
    citations = [_with_successors(c, notes.get(c.source_id), citable) for c in answer.citations]
    done: set[tuple[str, str]] = set()
    for citation in answer.citations:
        note = notes.get(citation.source_id)
        if note is None or (note.code, note.section) in done:
            continue
        done.add((note.code, note.section))
        if any(i in cited for s in note.successors for i in s.semantic_ids):
            continue  # the answer already cites the successor
        line = successor_line(note)
        if line is None:
            continue
        checked = check(line)
        if checked.status != "success":
            checks.append(CheckResult(name="successor_line", passed=False, reason_code=checked.reason_code,
                                      detail=f"not added: {line!r} ({checked.refusal_reason})"))
            continue
        text = f"{text}\n{line}"
        sentences += checked.sentences
        for new in checked.citations:
            if new.source_id not in cited:
                cited.add(new.source_id)
                citations.append(new)
    related = tuple(r for r in answer.related if r.source_id not in cited and r.source_id not in pack.fetched)
    return answer.model_copy(update={"answer": text, "citations": tuple(citations), "sentences": tuple(sentences),
                                     "checks": tuple(checks), "related": related})
