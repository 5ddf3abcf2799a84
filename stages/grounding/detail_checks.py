"""The validator's claim-detail checks: per sentence, the named entities, numbers, dates, quantities, key
terms and content words that its cited chunks must carry (``stages.grounding.claim_details`` finds them), the
sentence-level report of every check, and the answer-level check functions ``stages.grounding.validate`` runs.

Kept apart from ``stages.grounding.validate`` (which splits the answer, gathers the evidence and runs every check in
``CHECK_ORDER``) so that each stays readable; ``stages.grounding.validate`` re-exports the check functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contracts.answer import AnswerStatus, CheckResult, GenerationPolicy, SentenceReport
from stages.grounding.claim_details import UnsupportedDetails

__all__ = [
    "DETAIL_CHECK_STATUS",
    "AnalysedSentence",
    "content_failed",
    "content_detail",
    "sentence_report",
    "result",
    "check_entities_supported",
    "check_dates_supported",
    "check_quantities_supported",
    "check_comparison_supported",
    "check_content_words_supported",
    "check_numbers_supported",
    "check_key_terms_supported",
]

# Detail check name -> (reason code, status when it fails); ``stages.grounding.validate.CHECK_STATUS`` orders them.
DETAIL_CHECK_STATUS: dict[str, tuple[str, AnswerStatus]] = {
    "entities_supported": ("unsupported_entity", "hallucination_detected"),
    "numbers_supported": ("unsupported_number", "hallucination_detected"),
    "dates_supported": ("unsupported_date", "hallucination_detected"),
    "quantities_supported": ("unsupported_quantity", "hallucination_detected"),
    "comparison_supported": ("unsupported_comparison", "hallucination_detected"),
    "key_terms_supported": ("unsupported_key_term", "hallucination_detected"),
    "content_words_supported": ("unsupported_content_word", "hallucination_detected"),
}

# A sentence may word its claim in its own terms, but not mostly: it fails when more than this share of its
# content words (those not restating the question) is absent from every chunk it cites, and at least
# _CONTENT_MIN_UNSUPPORTED of them are. Measured on the LLM-style corpus and the HaluEval dev half (README):
# "half or more" gained 0.03 F1 on HaluEval dev but refused one-word paraphrases the existing tests accept
# ("Section 420 deals with cheating").
_CONTENT_MAX_UNSUPPORTED_SHARE = 0.5
_CONTENT_MIN_UNSUPPORTED = 1


@dataclass(frozen=True)
class AnalysedSentence:
    """One answer sentence as the validator analysed it against the chunks it cites."""


    text: str
    cited: tuple[str, ...]
    valid_cited: tuple[str, ...]
    words: frozenset[str]
    exempt: bool
    coverage: float | None
    threshold: float
    unsupported_numbers: tuple[float, ...]
    unsupported_terms: tuple[str, ...]
    supplied_by: tuple[str, ...]
    indicator_phrases: tuple[str, ...]
    details: UnsupportedDetails
    content_failed: bool
    reply: str
    wrong_side: str | None = None
    """Set when the sentence picks the side of a which-came-first question its evidence contradicts."""
    support: float | None = None
    """The verifier's P(the cited evidence supports the sentence), when it read it (``claim_support``)."""


def content_failed(details: UnsupportedDetails) -> bool:
    missing = len(details.content)
    too_many = missing >= _CONTENT_MIN_UNSUPPORTED and missing > _CONTENT_MAX_UNSUPPORTED_SHARE * max(1, details.content_total)
    return too_many or bool(details.substituted)



def _failed_on(name: str, reason_code: str, unsupported: Sequence[str], prefix: str = "") -> CheckResult:
    """A per-sentence check that fails when anything is unsupported, naming what is."""
    return CheckResult(name=name, passed=not unsupported, reason_code=reason_code if unsupported else None,
                       detail=prefix + ", ".join(unsupported) if unsupported else None)

def sentence_report(s: AnalysedSentence, policy: GenerationPolicy) -> SentenceReport:
    checks = [
        CheckResult(name="cited", passed=bool(s.cited) or s.exempt, reason_code=None if (s.cited or s.exempt) else "uncited_sentence"),
        CheckResult(
            name="citations_in_pack",
            passed=len(s.valid_cited) == len(s.cited),
            reason_code=None if len(s.valid_cited) == len(s.cited) else "invalid_citations",
            detail=None if len(s.valid_cited) == len(s.cited) else ", ".join(i for i in s.cited if i not in s.valid_cited),
        ),
    ]
    if s.coverage is not None:
        ok = s.coverage >= s.threshold
        checks.append(CheckResult(name="coverage", passed=ok, reason_code=None if ok else "low_coverage",
                                  detail=f"{s.coverage:.2f} vs threshold {s.threshold:.2f}"))
        d = s.details
        checks.append(_failed_on("entities", "unsupported_entity", d.entities))
        checks.append(_failed_on("dates", "unsupported_date", d.dates))
        if policy.check_numbers:
            checks.append(_failed_on("quantities", "unsupported_quantity", d.quantities))
        checks.append(CheckResult(name="content_words", passed=not s.content_failed,
                                  reason_code="unsupported_content_word" if s.content_failed else None,
                                  detail=content_detail(d) if d.content else None))
        if policy.check_numbers:
            checks.append(_failed_on("numbers", "unsupported_number", [f"{n:g}" for n in s.unsupported_numbers]))
        if policy.check_key_terms:
            checks.append(_failed_on("key_terms", "unsupported_key_term", s.unsupported_terms))
        if policy.check_completeness:
            checks.append(_failed_on("completeness", "incomplete_citation", s.supplied_by, prefix="uses uncited "))
    if s.wrong_side is not None:
        checks.append(CheckResult(name="comparison", passed=False, reason_code="unsupported_comparison",
                                  detail=s.wrong_side))
    if s.support is not None:
        ok = s.support >= policy.min_support
        checks.append(CheckResult(name="claim_supported", passed=ok, reason_code=None if ok else "claim_not_supported",
                                  detail=f"P(supported) {s.support:.2f} vs threshold {policy.min_support:.2f}"))
    if s.indicator_phrases:
        checks.append(CheckResult(name="indicator_phrases", passed=False, reason_code="hallucination_detected",
                                  detail=", ".join(s.indicator_phrases)))
    return SentenceReport(sentence=s.text, cited_ids=s.cited, coverage=s.coverage, exempt=s.exempt, checks=tuple(checks))


# --- the named detail checks ------------------------------------------------------------------------


def result(name: str, reason_code: str, failures: list[str], passed_detail: str | None = None) -> CheckResult:
    """A named check's result: failed with ``reason_code`` and the failures joined, or passed."""
    if failures:
        return CheckResult(name=name, passed=False, reason_code=reason_code, detail="; ".join(failures))
    return CheckResult(name=name, passed=True, detail=passed_detail)


def _result(name: str, failures: list[str]) -> CheckResult:
    return result(name, DETAIL_CHECK_STATUS[name][0], failures)


def check_entities_supported(sentences: Sequence[AnalysedSentence]) -> CheckResult:
    """Every named entity of a sentence (capitalised names, titles, roman numerals: "Attorney General of
    California", "Charles IV") occurs, word for word, in a chunk it cites, whatever the sentence's overlap."""
    return _result(
        "entities_supported",
        [f"{', '.join(s.details.entities)} not in {', '.join(s.valid_cited)}: {s.text!r}" for s in sentences if s.details.entities],
    )


def check_dates_supported(sentences: Sequence[AnalysedSentence]) -> CheckResult:
    """Every month name and year in a sentence occurs in a chunk it cites ("October 1973" against a chunk
    saying "November 1973" fails)."""
    return _result(
        "dates_supported",
        [f"{', '.join(s.details.dates)} not in {', '.join(s.valid_cited)}: {s.text!r}" for s in sentences if s.details.dates],
    )


def check_quantities_supported(sentences: Sequence[AnalysedSentence], policy: GenerationPolicy) -> CheckResult:
    """A number stated with a unit keeps the unit its cited chunk gives that number ("three years" against
    a chunk saying "three months" fails, though "three" is there). Switched off with the number check."""
    if not policy.check_numbers:
        return CheckResult(name="quantities_supported", passed=True, detail="disabled by policy")
    return _result(
        "quantities_supported",
        [f"{', '.join(s.details.quantities)} not in {', '.join(s.valid_cited)}: {s.text!r}" for s in sentences if s.details.quantities],
    )


def content_detail(d: UnsupportedDetails) -> str:
    """How many content words the cited chunks lack, and which."""
    detail = f"{len(d.content)} of {d.content_total} not in cited chunks: {', '.join(d.content)}"
    return detail + (f" (in place of the evidence's own qualifier: {', '.join(d.substituted)})" if d.substituted else "")


def check_comparison_supported(sentences: Sequence[AnalysedSentence]) -> CheckResult:
    """A sentence answering "which came first, A or B?" picks the side whose year its cited evidence gives
    first (last for "younger", "later"): "Pablo Trapero was born first" against a chunk giving Trapero 1971
    and Aleksander Ford 1908 fails (``stages.grounding.comparison_side``). No years for both sides: nothing to check."""
    return _result(
        "comparison_supported",
        [f"{s.wrong_side} ({', '.join(s.valid_cited)}): {s.text!r}" for s in sentences if s.wrong_side],
    )


def check_content_words_supported(sentences: Sequence[AnalysedSentence]) -> CheckResult:
    """A sentence's claim-bearing content words (beyond those restating the question) come mostly from the
    chunks it cites: more than half absent is a claim the evidence does not make; so is one absent word put
    where the evidence has its own ("military officer" cited to "police officer")."""
    return _result(
        "content_words_supported",
        [f"{content_detail(s.details)} ({', '.join(s.valid_cited)}): {s.text!r}" for s in sentences if s.content_failed],
    )


def check_numbers_supported(sentences: Sequence[AnalysedSentence], policy: GenerationPolicy) -> CheckResult:
    """Every number, amount, duration, date and section number in a sentence appears in a chunk it cites
    (words and digits normalised: "seven years" == "7 years")."""
    if not policy.check_numbers:
        return CheckResult(name="numbers_supported", passed=True, detail="disabled by policy")
    return _result(
        "numbers_supported",
        [f"{', '.join(f'{n:g}' for n in s.unsupported_numbers)} not in {', '.join(s.valid_cited)}: {s.text!r}" for s in sentences if s.unsupported_numbers],
    )


def check_key_terms_supported(sentences: Sequence[AnalysedSentence], policy: GenerationPolicy) -> CheckResult:
    """Claim-changing words (penalty kinds, negation, limits: ``policy.key_terms``) in a sentence appear in a
    chunk it cites: "the punishment is death" cited to a chunk without "death" fails, whatever its overlap."""
    if not policy.check_key_terms:
        return CheckResult(name="key_terms_supported", passed=True, detail="disabled by policy")
    return _result(
        "key_terms_supported",
        [f"'{', '.join(s.unsupported_terms)}' not in {', '.join(s.valid_cited)}: {s.text!r}" for s in sentences if s.unsupported_terms],
    )
