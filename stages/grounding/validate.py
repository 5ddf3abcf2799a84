"""Mechanical validation of a generator's text against the ContextPack it was given.

The LLM is untrusted: its text becomes an answer only if every named check below passes. Any failure
replaces the text with the policy's refusal sentence; the status and ``reason_code`` come from the first
failing check in ``CHECK_ORDER``. Every check's result is kept in ``Answer.checks`` and, per sentence, in
``Answer.sentences`` (sentence -> cited ids -> coverage -> checks).

Why long: the check table, the answer-level checks (each a few lines over the analysed sentences) and the two
entry points are one list to read top to bottom; the heavier checks live in ``detail_checks`` and
``claim_support``.

>>> extract_citations("See [IPC_420_0] and [policy_a.pdf#section-3; IPC_420_0].")
('IPC_420_0', 'policy_a.pdf#section-3')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from contracts.answer import (
    Answer,
    AnswerStatus,
    CheckResult,
    Citation,
    DraftAnswer,
    GenerationPolicy,
)
from contracts.errors import ContractViolationError
from contracts.ingest import Chunk
from contracts.retrieval import ContextPack
from contracts.verifier import AnswerabilityReport
from stages.grounding.claim_details import (
    EvidenceTerms,
    UnsupportedDetails,
    claim_details,
    evidence_terms,
    unsupported_details,
)
from stages.grounding.detail_checks import (
    DETAIL_CHECK_STATUS,
    AnalysedSentence,
    check_comparison_supported,
    check_content_words_supported,
    check_dates_supported,
    check_entities_supported,
    check_key_terms_supported,
    check_numbers_supported,
    check_quantities_supported,
    content_failed,
    result,
    sentence_report,
)
from stages.generation.prompt import citable_ids, prompt_chunks
from stages.grounding.claim_support import check_claims_supported, with_support
from stages.grounding.comparison_side import wrong_side
from stages.grounding.injected_support import REASON_CODE as INJECTED_SUPPORT, check_support_not_injected
from stages.grounding.successor_lines import with_successor_lines
from stages.provisions.successors import succession_names
from stages.ingest.injection import INJECTION_FLAG
from stages.text.normalise import stem
from stages.ports import Verifier
from stages.text.units import (
    CITATION_GROUP,
    evidence_numbers,
    META_STEMS,
    AnswerUnit,
    normalise_space,
    numbers_in,
    split_answer_units,
    strip_citations,
    words_and_stems,
)

__all__ = [
    "STAGE_VERSION",
    "CHECK_ORDER",
    "CHECK_STATUS",
    "extract_citations",
    "refusal_answer",
    "validate_answer_text",
    "validate_draft",
    "check_refusal_not_mixed",
    "check_indicator_phrases",
    "check_has_citation",
    "check_citations_in_pack",
    "check_support_not_injected",
    "check_sentences_cited",
    "check_has_factual_content",
    "check_claim_coverage",
    "check_entities_supported",
    "check_dates_supported",
    "check_quantities_supported",
    "check_comparison_supported",
    "check_content_words_supported",
    "check_numbers_supported",
    "check_key_terms_supported",
    "check_multi_chunk_completeness",
    "check_claims_supported",
    "check_length_ratio",
]

STAGE_VERSION = "validate.v3"

# Answer-level check name -> (reason code, status when it fails). The order is the priority for status.
CHECK_STATUS: dict[str, tuple[str, AnswerStatus]] = {
    "refusal_not_mixed": ("refusal_with_claims", "insufficient_context"),
    "indicator_phrases": ("hallucination_detected", "hallucination_detected"),
    "has_citation": ("no_citation", "invalid_citations"),
    "citations_in_pack": ("invalid_citations", "invalid_citations"),
    "support_not_injected": (INJECTED_SUPPORT, "invalid_citations"),
    "sentences_cited": ("uncited_sentence", "invalid_citations"),
    "has_factual_content": ("empty_answer", "insufficient_context"),
    "claim_coverage": ("low_coverage", "hallucination_detected"),
    "entities_supported": DETAIL_CHECK_STATUS["entities_supported"],
    "numbers_supported": DETAIL_CHECK_STATUS["numbers_supported"],
    "dates_supported": DETAIL_CHECK_STATUS["dates_supported"],
    "quantities_supported": DETAIL_CHECK_STATUS["quantities_supported"],
    "comparison_supported": DETAIL_CHECK_STATUS["comparison_supported"],
    "key_terms_supported": DETAIL_CHECK_STATUS["key_terms_supported"],
    "multi_chunk_completeness": ("incomplete_citation", "invalid_citations"),
    "content_words_supported": DETAIL_CHECK_STATUS["content_words_supported"],
    "claim_supported": ("claim_not_supported", "hallucination_detected"),
    "length_ratio": ("length_ratio", "hallucination_detected"),
}
CHECK_ORDER: tuple[str, ...] = tuple(CHECK_STATUS)

# An uncited chunk "supplies" a sentence when it covers at least this many of the words the cited chunks
# leave uncovered, and at least this share of them.
_COMPLETENESS_MIN_WORDS = 2
_COMPLETENESS_MIN_SHARE = 0.5

# A heading or list lead-in may stand uncited when it asserts no specific the pack lacks: up to
# _HEADING_MAX_WORDS words as a title ("Key facts"); a longer lead-in, up to _LEAD_IN_MAX_WORDS, also needs
# its content words from the evidence or the question ("Here are some steps to plan a trip to Germany").
_HEADING_MAX_WORDS = 8
_LEAD_IN_MAX_WORDS = 25
# Words that announce a list rather than claim something ("here are some steps to help you ...").
_LEAD_IN_WORDS = evidence_terms("step steps point points way ways tip tips key fact facts main thing things help "
                                "follow following list detail details").stems
# "Yes", "No" (with "," "." "—" after it) opening a sentence: the reply to a yes/no question.
# Punctuation, a citation or the end must follow: "No person shall ..." is a claim, not a reply.
_YES_NO_OPENING = re.compile(r"^\s*(yes|no)\b(?:\s*[,.!:;—–-]+\s*|\s*(?=\[)|\s*$)", re.IGNORECASE)


def extract_citations(text: str) -> tuple[str, ...]:
    """Every id cited in ``text``: ``[A]``, ``[A, B]``, ``[A; B]``; ids may contain ``_ . # - /``.
    Duplicates collapse; first-seen order. Malformed brackets (``[A B]``, ``[A``, ``[]``) cite nothing.

    >>> extract_citations("[A, B] then [B; C] and [bad id] [D")
    ('A', 'B', 'C')
    """
    seen: dict[str, None] = {}
    for match in CITATION_GROUP.finditer(text):
        for raw in re.split(r"[,;]", match.group(1)):
            source_id = raw.strip()
            if source_id:
                seen.setdefault(source_id, None)
    return tuple(seen)


def refusal_answer(
    query: str,
    status: AnswerStatus,
    reason_code: str,
    reason: str,
    policy: GenerationPolicy,
    pack: ContextPack | None = None,
    checks: tuple[CheckResult, ...] = (),
) -> Answer:
    """The refusal Answer: the policy's exact refusal sentence, no citations, with status and reason.

    >>> refusal_answer("q", "insufficient_context", "empty_context", "nothing retrieved", GenerationPolicy()).answer
    'I cannot answer based on the provided documents.'
    """
    return Answer(
        query=query,
        status=status,
        answer=policy.refusal_text,
        sources=pack.sources if pack is not None else (),
        refusal_reason=reason,
        reason_code=reason_code,
        checks=checks,
        confidence=pack.confidence if pack is not None else None,
    )


# --- evidence, precomputed once per validation -------------------------------------------------------


@lru_cache(maxsize=4096)
def _chunk_profile(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[float]]:
    words, stems = words_and_stems(text, evidence=True)
    return words, stems, evidence_numbers(text)


@lru_cache(maxsize=4096)
def _chunk_phrase_text(text: str) -> str:
    return f" {normalise_space(re.sub(r'[^a-z0-9]+', ' ', text.lower()))} "


@lru_cache(maxsize=64)
def _key_stems(terms: tuple[str, ...]) -> frozenset[str]:
    return frozenset(stem(t.lower()) for t in terms if t.strip())


@dataclass(frozen=True)
class _Evidence:
    chunks: dict[str, Chunk]
    words: dict[str, frozenset[str]]
    numbers: dict[str, frozenset[float]]
    key_terms: dict[str, frozenset[str]]
    terms: dict[str, EvidenceTerms]
    citable: frozenset[str]
    context_chars: int
    question: str
    question_words: frozenset[str]
    question_numbers: frozenset[float]


def _evidence(pack: ContextPack, policy: GenerationPolicy) -> _Evidence:
    shown = prompt_chunks(pack, policy)
    words: dict[str, frozenset[str]] = {}
    numbers: dict[str, frozenset[float]] = {}
    key_terms: dict[str, frozenset[str]] = {}
    terms: dict[str, EvidenceTerms] = {}
    keys = _key_stems(tuple(policy.key_terms))
    succession = succession_names(pack)
    for chunk in shown:
        prov = chunk.provenance
        # A section number is grounded by the chunk's provenance even when the text omits its heading.
        # A successor's chunk is also headed by what the pack's successor map says of it ("IPC 420 is replaced by
        # ... in force from 1 July 2024"), as a provision is by its number and title.
        heading = " ".join(x for x in (prov.section_id, prov.section_title, succession.get(chunk.semantic_id)) if x)
        text_words, text_stems, text_numbers = _chunk_profile(chunk.text)
        head_words, head_stems, head_numbers = _chunk_profile(heading) if heading else (frozenset(), frozenset(), frozenset())
        words[chunk.semantic_id] = text_words | head_words
        numbers[chunk.semantic_id] = text_numbers | head_numbers
        key_terms[chunk.semantic_id] = (text_stems | head_stems) & keys
        # The document's own names (file, code, section) support a sentence naming them ("Under the IPC").
        names = " ".join(x for x in (heading, prov.doc_code, re.sub(r"\.[A-Za-z0-9]+$", "", prov.filename)) if x)
        terms[chunk.semantic_id] = _chunk_terms(chunk.text, text_numbers, names, head_numbers)
    return _Evidence(
        chunks={c.semantic_id: c for c in shown},
        words=words,
        numbers=numbers,
        key_terms=key_terms,
        terms=terms,
        citable=citable_ids(pack, policy),
        context_chars=sum(len(c.text) for c in shown),
        question=pack.query,
        question_words=evidence_terms(pack.query).stems,
        question_numbers=numbers_in(pack.query),
    )


@lru_cache(maxsize=4096)
def _chunk_terms(text: str, numbers: frozenset[float], names: str, name_numbers: frozenset[float]) -> EvidenceTerms:
    body, label = evidence_terms(text, numbers), evidence_terms(names, name_numbers)
    return EvidenceTerms(stems=body.stems | label.stems, numbers=body.numbers | label.numbers,
                         quantities=body.quantities | label.quantities, qualified=body.qualified)


@lru_cache(maxsize=64)
def _phrase_patterns(phrases: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((p, f" {normalise_space(re.sub(r'[^a-z0-9]+', ' ', p.lower()))} ") for p in phrases if p.strip())


# --- per-sentence analysis ---------------------------------------------------------------------------


def _claim_text(sentence: str, question: str) -> tuple[str, str]:
    """What the sentence asserts, and how it replies to the question: ``"statement"``; ``"yes"``/``"no"``
    for a sentence opening with it (the rest is the claim); ``"bare_yes"``/``"bare_no"`` for "yes [A]",
    whose claim is the question itself (asserted, or denied)."""
    opening = _YES_NO_OPENING.match(sentence)
    if opening is None:
        return sentence, "statement"
    rest = sentence[opening.end():]
    reply = opening.group(1).lower()
    if strip_citations(rest).strip(" .!;,") == "":
        return f"{question.strip().rstrip('?')} {rest}", f"bare_{reply}"
    return rest, reply


def _heading_is_exempt(text: str, ev: _Evidence, policy: GenerationPolicy) -> bool:
    """A title or lead-in asserts nothing when it is short and every entity, date, number and key term in
    it occurs somewhere in the shown evidence or in the question it answers (a longer lead-in: its content
    words too)."""
    words = len(text.split())
    if words > _LEAD_IN_MAX_WORDS:
        return False
    missing = unsupported_details(claim_details(text), ev.terms.values(), presupposed=ev.question_words | _LEAD_IN_WORDS)
    if words > _HEADING_MAX_WORDS and content_failed(missing):
        return False
    numbers = set(missing.numbers) - numbers_in(ev.question)  # "Summarised in 200 words:" as the question asked
    pack_keys = frozenset().union(*ev.key_terms.values()) if ev.key_terms else frozenset()
    heading_keys = words_and_stems(text)[1] & _key_stems(tuple(policy.key_terms))
    return not (missing.entities or missing.dates or numbers) and heading_keys <= pack_keys


def _analyse(unit: AnswerUnit, ev: _Evidence, policy: GenerationPolicy) -> AnalysedSentence:
    sentence = unit.text
    cited = extract_citations(sentence)
    valid = tuple(i for i in cited if i in ev.citable)
    claim, reply = _claim_text(sentence, ev.question)
    words, stems = words_and_stems(claim)
    claim_specifics = claim_details(claim)
    sentence_numbers = claim_specifics.stated_numbers  # numbers_in(claim), parsed once with the claim's details
    exempt = words <= META_STEMS and not sentence_numbers  # same rule as stages.text.units.is_meta_statement
    if unit.heading and not cited:
        exempt = exempt or _heading_is_exempt(sentence, ev, policy)
    threshold = policy.min_coverage * (policy.multi_citation_factor if len(valid) > 1 else 1.0)
    cited_words: frozenset[str] = frozenset().union(*(ev.words[i] for i in valid)) if valid else frozenset()
    coverage: float | None = None
    unsupported: tuple[float, ...] = ()
    unsupported_terms: tuple[str, ...] = ()
    supplied_by: tuple[str, ...] = ()
    details = UnsupportedDetails()
    side: str | None = None
    if valid and not exempt:
        # Restating the question asserts nothing new, except when replying "yes" to it: then the question's
        # statement is the claim. A bare "no" denies the question's statement: only its overlap is checked.
        # The same holds for the question's numbers and years: "the 1949 film" restated from the question is
        # its presupposition, not the answer's claim.
        asserts_question = reply in ("yes", "bare_yes")
        presupposed = frozenset() if asserts_question else ev.question_words
        presupposed_numbers = frozenset() if asserts_question else ev.question_numbers
        details = unsupported_details(claim_specifics, [ev.terms[i] for i in valid], presupposed=presupposed,
                                      presupposed_numbers=presupposed_numbers)
        if reply == "bare_no":
            details = UnsupportedDetails()
        elif reply == "statement":
            side = wrong_side(claim, ev.question, (ev.chunks[i].text for i in valid))
        coverage = len(words & cited_words) / len(words) if words else 1.0
        cited_numbers = frozenset().union(*(ev.numbers[i] for i in valid))
        unsupported = () if reply == "bare_no" else tuple(sorted(sentence_numbers - cited_numbers - presupposed_numbers))
        cited_keys = frozenset().union(*(ev.key_terms[i] for i in valid))
        sentence_keys = stems & _key_stems(tuple(policy.key_terms))
        unsupported_terms = () if reply == "bare_no" else tuple(sorted(sentence_keys - cited_keys))
        uncovered = words - cited_words
        if len(uncovered) >= _COMPLETENESS_MIN_WORDS:
            supplied_by = tuple(
                other
                for other, other_words in ev.words.items()
                if other not in valid
                and len(uncovered & other_words) >= _COMPLETENESS_MIN_WORDS
                and len(uncovered & other_words) >= _COMPLETENESS_MIN_SHARE * len(uncovered)
            )
    phrase_text = _chunk_phrase_text(strip_citations(claim))
    evidence_text = " ".join(_chunk_phrase_text(ev.chunks[i].text) for i in valid)
    found = tuple(
        phrase
        for phrase, padded in _phrase_patterns(tuple(policy.indicator_phrases))
        if padded in phrase_text and padded not in evidence_text  # quoting the evidence is not speculation
    )
    return AnalysedSentence(sentence, cited, valid, words, exempt, coverage, threshold, unsupported, unsupported_terms,
                     supplied_by, found, details, content_failed(details), reply, side)


# --- the named answer-level checks -------------------------------------------------------------------


def _result(name: str, failures: list[str], passed_detail: str | None = None) -> CheckResult:
    return result(name, CHECK_STATUS[name][0], failures, passed_detail)


def check_refusal_not_mixed(text: str, policy: GenerationPolicy) -> CheckResult:
    """The refusal sentence must stand alone: refusing and claiming at once is not an answer."""
    mixed = policy.refusal_text.strip().lower() in text.lower() and text.strip() != policy.refusal_text.strip()
    return _result("refusal_not_mixed", ["the refusal sentence appears together with other text"] if mixed else [])


def check_indicator_phrases(sentences: list[AnalysedSentence]) -> CheckResult:
    """No phrase signalling outside knowledge or speculation ("as we know", "I think"...) unless the cited
    evidence itself contains it."""
    found = sorted({p for s in sentences for p in s.indicator_phrases})
    return _result("indicator_phrases", [f"answer contains hallucination indicator: '{p}'" for p in found])


def check_has_citation(sentences: list[AnalysedSentence]) -> CheckResult:
    """At least one citation in the answer."""
    return _result("has_citation", [] if any(s.cited for s in sentences) else ["answer contains no citations"])


def check_citations_in_pack(sentences: list[AnalysedSentence], pack: ContextPack) -> CheckResult:
    """Every cited id is a citable source of the pack: exact match, never quarantined nor flagged."""
    quarantined = set(pack.quarantined)
    flagged = {c.semantic_id for c in pack.chunks if INJECTION_FLAG in c.flags}
    failures: list[str] = []
    for source_id in dict.fromkeys(i for s in sentences for i in s.cited if i not in s.valid_cited):
        why = "quarantined" if source_id in quarantined else "flagged" if source_id in flagged else "not in the pack's sources"
        failures.append(f"{source_id} ({why})")
    return _result("citations_in_pack", [f"invalid citations: {', '.join(failures)}"] if failures else [])


def check_sentences_cited(sentences: list[AnalysedSentence]) -> CheckResult:
    """Every factual sentence carries a citation (meta-statements such as "Based on the evidence:" exempt)."""
    return _result("sentences_cited", [f"uncited sentence: {s.text!r}" for s in sentences if not s.cited and not s.exempt])


def check_has_factual_content(sentences: list[AnalysedSentence]) -> CheckResult:
    """The answer states something: at least one sentence is not a meta-statement."""
    return _result("has_factual_content", [] if any(not s.exempt for s in sentences) else ["answer states nothing"])


def check_claim_coverage(sentences: list[AnalysedSentence]) -> CheckResult:
    """Each cited sentence's content words overlap its cited chunks by at least ``min_coverage``
    (times ``multi_citation_factor`` when it cites several)."""
    return _result(
        "claim_coverage",
        [f"coverage {s.coverage:.2f} < {s.threshold:.2f}: {s.text!r}" for s in sentences if s.coverage is not None and s.coverage < s.threshold],
    )


def check_multi_chunk_completeness(sentences: list[AnalysedSentence], policy: GenerationPolicy) -> CheckResult:
    """A sentence whose uncovered content comes from a chunk it does not cite is flagged."""
    if not policy.check_completeness:
        return CheckResult(name="multi_chunk_completeness", passed=True, detail="disabled by policy")
    return _result(
        "multi_chunk_completeness",
        [f"{s.text!r} uses uncited {', '.join(s.supplied_by)}" for s in sentences if s.supplied_by],
    )


def check_length_ratio(text: str, ev: _Evidence, policy: GenerationPolicy) -> CheckResult:
    """The answer (citations removed) is not longer than ``max_length_ratio`` times the evidence it was given."""
    answer_chars = len(strip_citations(text))
    limit = policy.max_length_ratio * ev.context_chars
    detail = f"{answer_chars} answer chars vs {ev.context_chars} context chars (max ratio {policy.max_length_ratio:g})"
    return _result("length_ratio", [detail] if answer_chars > limit else [], passed_detail=detail)


# --- entry points ------------------------------------------------------------------------------------


def _citations(ids: tuple[str, ...], ev: _Evidence) -> tuple[Citation, ...]:
    out = []
    for source_id in ids:
        chunk = ev.chunks[source_id]
        prov = chunk.provenance
        out.append(
            Citation(
                source_id=source_id, filename=prov.filename, page=prov.page, page_end=prov.page_end,
                section_id=prov.section_id, section_title=prov.section_title, chunk_id=chunk.chunk_id,
                doc_hash=prov.doc_hash,
            )
        )
    return tuple(out)


def validate_answer_text(
    text: str, pack: ContextPack, policy: GenerationPolicy, *, backend: str | None = None,
    verifier: Verifier | None = None, answerability: float | None = None,
) -> Answer:
    """Run every check on ``text`` against ``pack``: a ``success`` Answer carrying the text and resolved
    citations, or the refusal sentence with the first failing check's status and reason code.

    With a ``verifier`` (and ``policy.verify``) each cited sentence is also read against its evidence
    (``claim_supported``); ``answerability`` (the pack's best P(answers)) is carried into the Answer."""
    stripped = text.strip()
    if stripped == policy.refusal_text.strip():
        refused = CheckResult(name="model_refused", passed=True, reason_code="model_refused")
        answer = refusal_answer(pack.query, "insufficient_context", "model_refused",
                                "the model found the evidence insufficient", policy, pack, (refused,))
        return answer.model_copy(update={"backend": backend, "answerability": answerability})
    ev = _evidence(pack, policy)
    sentences = with_support([_analyse(u, ev, policy) for u in split_answer_units(stripped)],
                             {i: c.text for i, c in ev.chunks.items()}, pack.query, policy, verifier)
    checks = (
        check_refusal_not_mixed(stripped, policy),
        check_indicator_phrases(sentences),
        check_has_citation(sentences),
        check_citations_in_pack(sentences, pack),
        check_support_not_injected(sentences, {i: c.text for i, c in ev.chunks.items()}),
        check_sentences_cited(sentences),
        check_has_factual_content(sentences),
        check_claim_coverage(sentences),
        check_entities_supported(sentences),
        check_numbers_supported(sentences, policy),
        check_dates_supported(sentences),
        check_quantities_supported(sentences, policy),
        check_comparison_supported(sentences),
        check_key_terms_supported(sentences, policy),
        check_multi_chunk_completeness(sentences, policy),
        check_content_words_supported(sentences),
        check_claims_supported(sentences, policy),
        check_length_ratio(stripped, ev, policy),
    )
    reports = tuple(sentence_report(s, policy) for s in sentences)
    failed = next((c for c in checks if not c.passed), None)
    if failed is not None:
        reason_code, status = CHECK_STATUS[failed.name]
        answer = refusal_answer(pack.query, status, reason_code, failed.detail or failed.name, policy, pack, checks)
        return answer.model_copy(update={"sentences": reports, "backend": backend, "answerability": answerability})
    cited = extract_citations(stripped)
    return Answer(
        query=pack.query,
        status="success",
        answer=stripped,
        citations=_citations(cited, ev),
        sources=pack.sources,
        related=_citations(tuple(s for s in pack.sources if s not in cited and s in ev.chunks), ev),
        checks=checks,
        sentences=reports,
        confidence=pack.confidence,
        answerability=answerability,
        backend=backend,
    )


def validate_draft(
    draft: DraftAnswer, pack: ContextPack, policy: GenerationPolicy, *, verifier: Verifier | None = None,
    answerability: AnswerabilityReport | None = None,
) -> Answer:
    """Validate a generator's draft against the pack it was generated from (the raw text stays in the draft)."""
    if draft.query != pack.query:
        raise ContractViolationError(f"draft answers {draft.query!r} but the pack is for {pack.query!r}")
    best = answerability.best if answerability is not None else None
    answer = validate_answer_text(draft.raw_text, pack, policy, backend=draft.backend, verifier=verifier,
                                  answerability=best.answers if best is not None else None)
    if not policy.name_successors:
        return answer
    # A cited provision that a successor map carries on: one more line, checked alone (stages.grounding.successor_lines).
    return with_successor_lines(answer, pack, lambda line: validate_answer_text(
        line, pack, policy, backend=draft.backend, verifier=verifier, answerability=answer.answerability))
