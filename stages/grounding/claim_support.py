"""Claim support: does the evidence a sentence cites say what the sentence says? The verifier reads each one.

The word checks of ``stages.grounding.detail_checks`` catch a claim that brings in a name, number or key term
its evidence lacks; they cannot catch one that recombines the evidence's own words into something it does
not say ("Arthur's Magazine" as the answer where the knowledge says First for Women came first). Each cited,
non-exempt sentence of an answer is read by the verifier as a claim answering the pack's question against the
text of the chunks it cites (``supports``), in one batch; a sentence under ``policy.min_support`` fails the
``claim_supported`` check (``claim_not_supported``). A policy with ``verify`` off scores nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from contracts.answer import CheckResult, GenerationPolicy
from contracts.verifier import VerifierPair
from stages.grounding.detail_checks import AnalysedSentence, result
from stages.ports import Verifier
from stages.text.units import normalise_space, strip_citations

__all__ = ["STAGE_VERSION", "claim_text", "with_support", "check_claims_supported"]

STAGE_VERSION = "claim_support.v1"
_SPACE_BEFORE_MARK = re.compile(r"\s+([.,;:!?])")


def claim_text(sentence: str) -> str:
    """What a sentence claims, as the verifier reads it: citations removed, spacing mended.

    >>> claim_text("Delhi [HQA_1_0].")
    'Delhi.'
    """
    return _SPACE_BEFORE_MARK.sub(r"\1", normalise_space(strip_citations(sentence)))


def with_support(
    sentences: Sequence[AnalysedSentence], chunk_texts: Mapping[str, str], question: str, policy: GenerationPolicy,
    verifier: Verifier | None,
) -> list[AnalysedSentence]:
    """The sentences with ``support`` set (the verifier's P(supports)) for each cited, non-exempt one."""
    if not policy.verify or verifier is None:
        return list(sentences)
    rows = [i for i, s in enumerate(sentences) if s.valid_cited and not s.exempt and claim_text(s.text)]
    pairs = [VerifierPair(task="supports", text=claim_text(sentences[i].text), question=question,
                          passage="\n".join(chunk_texts[c] for c in sentences[i].valid_cited)) for i in rows]
    scores = dict(zip(rows, verifier.score(pairs), strict=True)) if pairs else {}
    return [dataclasses.replace(s, support=round(scores[i], 6)) if i in scores else s for i, s in enumerate(sentences)]


def check_claims_supported(sentences: Sequence[AnalysedSentence], policy: GenerationPolicy) -> CheckResult:
    """Every scored sentence reaches ``policy.min_support`` (passes when the verifier was switched off)."""
    if not policy.verify:
        return CheckResult(name="claim_supported", passed=True, detail="verifier switched off by policy")
    failures = [f"P(supported) {s.support:.2f} < {policy.min_support:.2f}: {s.text!r}"
                for s in sentences if s.support is not None and s.support < policy.min_support]
    scored = [s.support for s in sentences if s.support is not None]
    return result("claim_supported", "claim_not_supported", failures,
                  passed_detail=f"lowest P(supported) {min(scored):.2f}" if scored else None)
