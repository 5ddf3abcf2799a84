"""Answerability: does any passage of the pack hold the answer? The verifier reads, where word matching failed.

Before anything is generated, the verifier (``stages.ports.Verifier``, citebound's own trained model) scores
each citable passage of the pack against the question (``score_answerability``). The scores serve three
decisions:

* the **gate** (``check_answerable``): when no passage reaches ``policy.min_answerability`` the question is
  refused with ``not_answerable``, naming the best passage and its score; the generator is never called;
* **provision choice** (``rank_by_answerability``): the generator weighs the evidence in answerability order,
  so a neighbouring provision that merely shares the question's words ranks below the one that answers it;
* **close provisions** (``close_provisions``): when the best two passages are different provisions and both
  plausibly answer (the second within ``policy.close_answerability_margin`` of the first), the answer shows
  both, each with the condition that separates them, rather than choosing one silently.

A policy with ``verify`` off scores nothing (an explicit setting recorded with the run, never a fallback).
"""

from __future__ import annotations

from contracts.answer import CheckResult, GenerationPolicy
from contracts.retrieval import ContextPack
from contracts.verifier import AnswerabilityReport, PassageScore, VerifierPair
from stages.generation.prompt import citable_ids, prompt_chunks
from stages.generation.provision_labels import section_of_id
from stages.ports import Verifier

__all__ = [
    "STAGE_VERSION",
    "score_answerability",
    "check_answerable",
    "rank_by_answerability",
    "close_provisions",
]

STAGE_VERSION = "answerability.v1"


def score_answerability(pack: ContextPack, policy: GenerationPolicy, verifier: Verifier | None) -> AnswerabilityReport:
    """The verifier's P(answers) for (question, passage) of every citable shown chunk, in one batch."""
    if not policy.verify or verifier is None:
        return AnswerabilityReport(query=pack.query, verifier="")
    citable = citable_ids(pack, policy)
    chunks = [c for c in prompt_chunks(pack, policy) if c.semantic_id in citable and c.text.strip()]
    scores = verifier.score([VerifierPair(task="answers", text=pack.query, passage=c.text) for c in chunks])
    return AnswerabilityReport(
        query=pack.query, verifier=verifier.name,
        passages=tuple(PassageScore(source_id=c.semantic_id, answers=round(s, 6)) for c, s in zip(chunks, scores, strict=True)))


def check_answerable(report: AnswerabilityReport, policy: GenerationPolicy) -> CheckResult:
    """Some passage reaches ``policy.min_answerability`` (passes when the verifier was switched off)."""
    if not report.verifier:
        return CheckResult(name="answerable", passed=True, detail="verifier switched off by policy")
    best = report.best
    if best is None:
        return CheckResult(name="answerable", passed=False, reason_code="not_answerable",
                           detail="no citable passage to read")
    detail = f"best passage {best.source_id}: P(answers) {best.answers:.2f} vs threshold {policy.min_answerability:.2f}"
    if best.answers >= policy.min_answerability:
        return CheckResult(name="answerable", passed=True, detail=detail)
    return CheckResult(name="answerable", passed=False, reason_code="not_answerable", detail=detail)


def rank_by_answerability(report: AnswerabilityReport) -> dict[str, float]:
    """source id -> P(answers), for the generation request (which orders its evidence by it)."""
    return {p.source_id: p.answers for p in report.passages}


def close_provisions(report: AnswerabilityReport, policy: GenerationPolicy) -> tuple[str, ...]:
    """The best two passages when they are different provisions that both plausibly answer: each reaches the
    gate and the second is within ``policy.close_answerability_margin`` of the first. Otherwise ()."""
    ranked = sorted(report.passages, key=lambda p: -p.answers)
    if len(ranked) < 2:
        return ()
    first, second = ranked[0], next((p for p in ranked[1:] if _provision(p.source_id) != _provision(ranked[0].source_id)), None)
    if second is None or _provision(first.source_id) is None:
        return ()
    if second.answers >= policy.min_answerability and first.answers - second.answers <= policy.close_answerability_margin:
        return (first.source_id, second.source_id)
    return ()


def _provision(source_id: str) -> tuple[str, str] | None:
    return section_of_id(source_id)
