"""The extractive reader: answers a generation request by quoting its evidence, deterministically, offline.

It reads each citable item's text as a prompt would show it and composes a short answer from the best units
(``stages.generation.clause_units``: sentences, or clauses of a statute's long sentences), each copied verbatim
and followed by ``[semantic_id]``. When no unit is relevant to the question it returns exactly the refusal
sentence. Because it quotes what it cites, its output passes the validator. ``stages.adapters.extractive_llm``
serves it as the default generation backend. The answer is focused:

* a question naming a section ("section 420", "s. 420", "IPC 420") is answered only from that section's
  chunks when the pack holds any (the section is read from the id: ``IPC_420_0``);
* a definition question prefers the clause that defines the asked term (``"employer" means ...``) over
  clauses that define other terms;
* a punishment question prefers units that state a penalty; illustrations count for less;
* a unit is relevant when enough of the question's words, or of the statute words the query analyser mapped
  them to (RELATED TERMS: "jailed for stealing" -> imprisonment, theft), occur in it; units are ranked by
  that score times ``1 / (1 + RANK_DECAY * p)`` for the evidence block at position p (blocks come in
  retrieval order), except the exact definition of the asked term, which wins wherever it sits;
* statute forms of definition count ("... commits forgery", "is said, except ..., to defame",
  "designated an “unlawful assembly”", "The words “public servant” denote"), and textbook ones ("An
  arithmetic progression is a list of ...", "This fixed number is called the common difference");
* at most ``max_sentences`` units and about ``CHAR_BUDGET`` characters (one best unit may be longer), only
  units scoring at least 70% of the best one and, when the best one shares a topic word with the question,
  sharing one too (not merely the intent's vocabulary: "imprisonment" for "jailed"), no truncated chunk
  edges while complete units exist, and no OCR debris (units made mostly of non-letters).

>>> from contracts.generation import GenerationRequest
>>> ExtractiveReader().answer(GenerationRequest(question="anything?"))
'I cannot answer based on the provided documents.'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from contracts.answer import DEFAULT_REFUSAL
from contracts.generation import GenerationRequest
from stages.generation.clause_units import clause_units
from stages.generation.prompt import shown_text
from stages.generation.provision_labels import (
    MAX_PROVISIONS,
    first_of_provision,
    provision_labels,
    section_of_id,
    without_title,
)
from stages.grounding.precheck import INTENT_LANGUAGE, QUESTION_WORDS, shared_terms
from stages.ingest.injection import scan_injection
from stages.text.units import content_words, evidence_numbers, is_meta_statement, numbers_in, split_sentences

__all__ = [
    "CHAR_BUDGET",
    "STAGE_VERSION",
    "ExtractiveReader",
    "ReadRequest",
    "read_request",
    "sections_named",
    "section_of_id",
    "defined_terms",
]

STAGE_VERSION = "extractive_reader.v1"

CHAR_BUDGET = 600
"""Characters of quoted text an answer aims at; a single best unit may be longer."""

_MIN_CONTENT_WORDS = 3
_MIN_QUERY_SHARE = 0.25
_INTENT_BONUS = 1.5
_EXPANSION_WEIGHT = 0.5
_DEFINES_SUBJECT_BONUS = 3.0
_STATES_PENALTY_BONUS = 1.0
_ILLUSTRATION_WEIGHT = 0.5
_MIN_RELATIVE_SCORE = 0.7
RANK_DECAY = 0.5
"""Units are ranked by word score times ``1 / (1 + RANK_DECAY * p)``, p the 0-based position of their evidence
block: blocks come in retrieval order, and retrieval (dense + BM25 + section priors) ranks sections better
than word overlap with a single clause does."""
_MIN_LETTER_SHARE = 0.7
_MIN_WORD_TOKEN_SHARE = 0.6


@dataclass
class ReadRequest:
    """What the extractive backend reads from a request: the citable evidence as a prompt shows it."""

    refusal: str
    max_sentences: int
    question: str
    intent: str
    related_terms: str
    chunks: list[tuple[str, str]] = field(default_factory=list)
    """(semantic_id, its shown lines joined by spaces), citable items only, in request order."""
    side_by_side: tuple[str, ...] = ()
    """Close provisions to show each of."""
    first_lines: dict[str, str] = field(default_factory=dict)
    """semantic_id -> the item's first shown line (where a provision's number and title stand)."""


def read_request(request: GenerationRequest) -> ReadRequest:
    """The request as the backend works on it: texts and question as a prompt would show them (neutralised,
    whitespace-normalised), flagged items left out.

    When the verifier read the evidence (items carry ``answerability``), only the items it reads as answering
    (at least ``policy.min_answerability``; the best one always, and the close provisions) are quoted from, in
    its order: a neighbouring provision that shares the question's words but does not answer it is not quoted.
    Every item stays citable evidence in the pack; the reader just does not choose it."""
    read = ReadRequest(refusal=request.policy.refusal_text.strip() or DEFAULT_REFUSAL,
                       max_sentences=max(1, request.policy.max_answer_sentences),
                       question=" ".join(shown_text(request.question)), intent=request.intent,
                       related_terms=" ".join(shown_text(", ".join(request.related_terms))),
                       side_by_side=request.close_provisions)
    citable = [item for item in request.evidence if item.citable]
    scored = [item.answerability for item in citable if item.answerability is not None]
    if scored:
        best = max(scored)
        citable = [item for item in citable if item.answerability is not None and (
            item.answerability >= request.policy.min_answerability or item.answerability == best
            or item.source_id in request.close_provisions)]
    for item in citable:
        lines = shown_text(item.text)
        if lines:
            read.chunks.append((item.source_id, " ".join(lines)))
            read.first_lines.setdefault(item.source_id, lines[0])
    return read


# --- focus: named sections, defined terms, penalties ------------------------------------------------

_SECTION_NUMBER = r"\d+[A-Za-z]{0,2}"
_SECTION_WORDS = re.compile(
    rf"\b(?:sections?|secs?\.?|ss?\.|u/s\.?|articles?|arts?\.)\s*({_SECTION_NUMBER}(?:\s*(?:,|and|or|&|/)\s*{_SECTION_NUMBER})*)\b",
    re.I,
)
def sections_named(question: str, doc_codes: frozenset[str] = frozenset()) -> frozenset[tuple[str | None, str]]:
    """Sections a question names, as ``(doc_code or None, section)`` lower-cased: "section 420",
    "s. 420", "sections 417 and 420", and — for the given doc codes — "IPC 420" or "420 IPC".

    >>> sorted(sections_named("Is s. 420 or IPC 417 worse?", frozenset({"IPC"})), key=str)
    [('ipc', '417'), (None, '420')]
    """
    found: set[tuple[str | None, str]] = set()
    for match in _SECTION_WORDS.finditer(question):
        found.update((None, n.lower()) for n in re.findall(_SECTION_NUMBER, match.group(1)))
    for code in doc_codes:
        escaped = re.escape(code)
        for pattern in (
            rf"\b{escaped}\s*(?:s\.|sec\.?|section)?\s*({_SECTION_NUMBER})\b",
            rf"\b({_SECTION_NUMBER})\s+(?:of\s+(?:the\s+)?)?{escaped}\b",
        ):
            found.update((code.lower(), m.group(1).lower()) for m in re.finditer(pattern, question, re.I))
    return frozenset(found)


def _one_number_in_codes(source_ids: tuple[str, ...]) -> bool:
    """Whether the ids are one section number in two or more codes (IPC 302 and BNS 302).

    >>> _one_number_in_codes(("IPC_302_0", "BNS_302_0")), _one_number_in_codes(("IPC_323_0", "IPC_324_0"))
    (True, False)
    """
    keys = {k for k in map(section_of_id, source_ids) if k is not None}
    return len(keys) > 1 and len({section.lower() for _, section in keys}) == 1


def _focus_on_named_sections(question: str, chunks: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], frozenset[str]]:
    """The chunks of the sections the question names (all chunks when the pack has none of them), and
    those section numbers (they need not be matched as words: the chunk is that section)."""
    doc_codes = frozenset(s[0] for s in map(section_of_id, (i for i, _ in chunks)) if s)
    named = sections_named(question, doc_codes)
    if not named:
        return chunks, frozenset()

    def of_named(source_id: str, with_code: bool) -> bool:
        where = section_of_id(source_id)
        if where is None:
            return False
        code, section = where[0].lower(), where[1].lower()
        return any(s == section and (not with_code or c in (None, code)) for c, s in named)

    focused = [c for c in chunks if of_named(c[0], True)] or [c for c in chunks if of_named(c[0], False)]
    if not focused:
        return chunks, frozenset()
    return focused, frozenset(section for _, section in named)


_QUOTE_OPEN = "\"“'‘"
_QUOTE_CLOSE = "\"”'’"
_QUOTED_IN_QUESTION = re.compile(rf"(?:^|(?<=\s))[{_QUOTE_OPEN}]([^{_QUOTE_CLOSE}]{{1,60}})[{_QUOTE_CLOSE}](?=[\s?.,!]|$)")
_ACT_NAME = re.compile(r"\b(?:under|in|of|by|per)\s+(?:the\s+)?((?:[\w.-]+\s+){0,6}?)(?:act|code|rules?|regulations?)\b", re.I)
_DEFINES = re.compile(
    rf"[{_QUOTE_OPEN}](?P<quoted>[^{_QUOTE_CLOSE}]{{1,60}})[{_QUOTE_CLOSE}]\s*,?\s*(?:shall\s+mean|means|shall\s+include|includes|denotes?)\b"
    rf"|^\W*[{_QUOTE_OPEN}](?P<heading>[^{_QUOTE_CLOSE}]{{1,60}})[{_QUOTE_CLOSE}]\s*:"
    r"|^(?:the\s+(?:word|expression|term)\s+)?(?P<plain>[A-Za-z][\w -]{0,40}?)\s+(?:shall\s+mean|means|denotes)\b"
    r"|\b(?:is|are)\s+said\s+to\s+(?P<said>[^.;]{1,60}?)\W*$"
    rf"|\b(?:is|are)\s+said\s+to\s+(?:\w+\s+){{0,3}}?[{_QUOTE_OPEN}](?P<said_quoted>[^{_QUOTE_CLOSE}]{{1,40}})[{_QUOTE_CLOSE}]"
    # How penal statutes define an offence: "... commits “extortion”", "... commits forgery.", "commits the
    # offence of stalking", "Theft is “robbery” if ...", "are designated as “grievous”", and "is said, except
    # in the cases hereinafter excepted, to defame".
    rf"|\bcommits?\s+(?:the\s+offence\s+of\s+)?[{_QUOTE_OPEN}](?P<commits_quoted>[^{_QUOTE_CLOSE}]{{1,40}})[{_QUOTE_CLOSE}]"
    r"|\bcommits?\s+(?:the\s+offence\s+of\s+)?(?P<commits>[a-z]+(?:[ -][a-z]+){0,3})\W*$"
    rf"|\b(?:is|are)\s+(?:designated\s+(?:as\s+|an?\s+)?|called\s+)?[{_QUOTE_OPEN}](?P<is_quoted>[^{_QUOTE_CLOSE}]{{1,40}})[{_QUOTE_CLOSE}]"
    r"|\b(?:is|are)\s+said\s*,[^.;]{1,80}?,\s*to\s+(?P<said_far>[a-z]+(?:\s+[a-z]+)?)"
    # How textbooks define: "An arithmetic progression is a list of numbers in which ...", "This fixed number
    # is called the common difference" (the term after "called"), at the start of the unit.
    r"|^\s*(?:an?|the)\s+(?P<textbook>[a-z][a-z -]{1,40}?)\s+(?:is|are)\s+(?:a|an|the)\s"
    r"|\b(?:is|are)\s+called\s+(?:the\s+|an?\s+)?(?P<called>[a-z][a-z -]{1,40}?)(?:\s+of\b|[.,;]|$)",
    re.I,
)


def defined_terms(unit: str) -> frozenset[str]:
    """Content words of the terms a unit defines (``"employer" means``, ``is said to "cheat"``).

    >>> sorted(defined_terms('"employer" means any person who engages employees')), sorted(defined_terms("Theft is theft"))
    (['employ'], [])
    """
    words: set[str] = set()
    for match in _DEFINES.finditer(unit):
        term = next(g for g in match.groups() if g is not None)
        words |= content_words(term)
    return frozenset(words)


def _defines_subject(defined: frozenset[str], subject: frozenset[str]) -> float:
    """1.0 when a unit's defined terms (``defined_terms``) are exactly the asked term, the terms' overlap
    (Jaccard) when it defines a related one ("scheduled employment" for "employee"), 0.0 otherwise."""
    if not defined or not subject or not shared_terms(subject, defined):
        return 0.0
    return len(shared_terms(subject, defined)) / len(subject | defined)


def _defines_asked(defined: frozenset[str], subject: frozenset[str]) -> bool:
    """A unit defines a term every word of which was asked ("public servant" for "who is a public servant
    under the code?"), so it is a definition of what the question is about, not of a neighbour."""
    return bool(defined and subject) and len(shared_terms(defined, subject)) == len(defined)


def _definition_subject(question: str, query_terms: frozenset[str]) -> frozenset[str]:
    """What a definition question asks about: a quoted term, else its terms minus the act's name
    ("Who is an employer under the wages act?" -> employer)."""
    quoted = _QUOTED_IN_QUESTION.search(question)
    if quoted:
        subject = content_words(quoted.group(1)) - QUESTION_WORDS
        if subject:
            return subject
    act_words: set[str] = set()
    for match in _ACT_NAME.finditer(question):
        act_words |= content_words(match.group(1))
    return (query_terms - act_words) or query_terms


_STATES_PENALTY = re.compile(
    r"\bpunish(?:ed|able)\s+with\b|\bliable\s+to\s+(?:a\s+)?(?:fine|penalty|imprisonment)\b|\bimprisonment\s+(?:for|of)\b"
    r"|\bsentenced\s+to\b|\bfine\s+(?:of|which|not)\b",
    re.I,
)


def _legible(quote: str) -> bool:
    # OCR debris ("~~ |I| ;: _") is mostly non-letters or one-character tokens.
    visible = [c for c in quote if not c.isspace()]
    tokens = quote.split()
    if not visible or not tokens:
        return False
    letters = sum(c.isalpha() for c in visible)
    wordlike = sum(bool(re.fullmatch(r"[\W_]*(?:[A-Za-z]{2,}|\d[\d,.]*|[AaI])[\W_]*", t)) for t in tokens)
    return letters / len(visible) >= _MIN_LETTER_SHARE and wordlike / len(tokens) >= _MIN_WORD_TOKEN_SHARE


def _as_quote(sentence: str) -> str:
    # Brackets inside a document would read as citations in the answer.
    return sentence.replace("[", "(").replace("]", ")").rstrip(" .;:,—–-")


@dataclass(frozen=True)
class _Candidate:
    secondary: bool
    """A fragment or a heading: quoted only when no complete unit is relevant."""
    score: float
    order: int
    source_id: str
    quote: str
    defines: float = 0.0
    """How exactly the unit defines the asked term: 1.0 for that term itself, less for a related one."""
    rank_weight: float = 1.0
    """``1 / (1 + RANK_DECAY * position)`` of the unit's evidence block: orders the units, while the
    70%-of-the-best cut-off compares plain scores so that further relevant units still join the answer."""
    defines_a_term: bool = False
    """Whether the unit defines some term (``defined_terms``; read for definition questions only)."""
    topical: bool = True
    """Whether the unit shares a word with the question (its own or a mapped statute word) that is not merely
    the vocabulary of the question's intent ("imprisonment" for "jailed"): what a further unit needs."""


class ExtractiveReader:
    """Composes an extractive answer for a request (see the module docstring).

    ``max_sentences`` overrides the policy's ``max_answer_sentences``; ``char_budget`` is the answer's target
    length in quoted characters.
    """

    def __init__(self, max_sentences: int | None = None, char_budget: int = CHAR_BUDGET) -> None:
        self._max_sentences = max_sentences
        self._char_budget = char_budget

    def answer(self, request: GenerationRequest) -> str:
        """The answer text: cited quotes, one per line, or exactly the policy's refusal sentence."""
        return self._answer(read_request(request))

    def _answer(self, parsed: ReadRequest) -> str:
        chunks, named_sections = _focus_on_named_sections(parsed.question, parsed.chunks)
        asked_terms = content_words(parsed.question) - QUESTION_WORDS
        # Inside a named section's chunks, its number is already matched.
        query_terms = asked_terms - named_sections
        if not chunks or not (query_terms or named_sections):
            return parsed.refusal
        candidates = self._candidates(parsed, chunks, query_terms)
        if not candidates:
            return parsed.refusal
        limit = self._max_sentences or parsed.max_sentences
        chosen = self._select(candidates, limit)
        if parsed.side_by_side and (not named_sections or _one_number_in_codes(parsed.side_by_side)):
            # Close provisions, or one section number in several codes (stages.retrieval.context): each gets its best
            # unit, so none is dropped silently; they are labelled below (by condition, or by code).
            chosen = self._one_per_provision([c for c in candidates if c.source_id in parsed.side_by_side], chosen)
        labels = provision_labels([c.source_id for c in chosen], parsed.first_lines)
        chosen = [c for c in chosen if labels is None or c.source_id in labels]
        return "\n".join(
            f"{labels[c.source_id] + ': ' if labels and first else ''}"
            f"{without_title(c.quote, labels[c.source_id]) if labels else c.quote} [{c.source_id}]."
            for c, first in zip(chosen, first_of_provision(chosen), strict=True)
        )

    def _candidates(self, parsed: ReadRequest, chunks: list[tuple[str, str]], query_terms: frozenset[str]) -> list[_Candidate]:
        expansion_terms = content_words(parsed.related_terms) - QUESTION_WORDS - query_terms
        intent_language = INTENT_LANGUAGE.get(parsed.intent)  # type: ignore[call-overload]  # unknown intent: no bonus
        subject = _definition_subject(parsed.question, query_terms) if parsed.intent == "definition" else frozenset()
        needed = math.ceil(_MIN_QUERY_SHARE * len(query_terms)) if query_terms else 0
        needed = max(1, needed) if query_terms else 0
        each_code = frozenset(parsed.side_by_side) if _one_number_in_codes(parsed.side_by_side) else frozenset()
        candidates: list[_Candidate] = []
        seen: set[str] = set()
        for position, (source_id, text) in enumerate(chunks):
            rank_weight = 1.0 / (1.0 + RANK_DECAY * position)
            chunk_numbers = evidence_numbers(text)
            for unit in clause_units(text):
                quote = _as_quote(unit.text)
                words = content_words(quote)
                matched = len(words & query_terms)
                related = len(words & expansion_terms)
                if (
                    # The question's own words or the statute words the analyser mapped them to
                    # ("jailed for stealing" -> imprisonment, theft) must reach the unit.
                    matched + related < needed
                    or len(words) < _MIN_CONTENT_WORDS
                    or quote.lower() in seen
                    or parsed.refusal.lower() in quote.lower()
                    or is_meta_statement(quote)
                    or scan_injection(quote)
                    or not _legible(quote)
                    or not numbers_in(quote) <= chunk_numbers  # a cut must not change a quantity
                    or len(split_sentences(quote)) != 1  # would be cut in two, leaving a part uncited
                    # Only a section number was asked about ("punishment under section 379"): the unit must
                    # at least be of the asked type (unless the number is in several codes: each is shown).
                    or (not query_terms and intent_language is not None and parsed.intent != "general"
                        and not intent_language.search(quote) and source_id not in each_code)
                ):
                    continue
                seen.add(quote.lower())
                score = matched + _EXPANSION_WEIGHT * related
                # The unit's words that are the intent's own vocabulary ("imprisonment", "punished") do not
                # make it about the question's topic.
                intent_words = (content_words(" ".join(m.group(0) for m in intent_language.finditer(quote)))
                                if intent_language is not None else frozenset())
                topical = bool((words & (query_terms | expansion_terms)) - intent_words)
                if intent_language is not None and parsed.intent != "general" and intent_language.search(quote):
                    score += _INTENT_BONUS
                defines = 0.0
                defined: frozenset[str] = frozenset()
                if parsed.intent == "definition":
                    defined = defined_terms(quote)
                    defines = _defines_subject(defined, subject)
                    if defines:
                        score += _DEFINES_SUBJECT_BONUS * defines
                    elif defined:
                        score -= _INTENT_BONUS  # it defines some other term
                if parsed.intent == "punishment" and _STATES_PENALTY.search(quote):
                    score += _STATES_PENALTY_BONUS
                if unit.kind == "illustration":
                    score *= _ILLUSTRATION_WEIGHT
                # Ties keep evidence order (chunks come ranked), so the output is deterministic.
                # The exact definition of the asked term is the answer wherever retrieval placed it, and even
                # when it only opens a list ("is designated an “unlawful assembly”, if ... is—"): its reader can
                # open the cited section for the items, which a neighbouring section's complete sentence lacks.
                weight = 1.0 if defines == 1.0 else rank_weight
                secondary = unit.heading or (unit.fragment and not (unit.lead_in_only and _defines_asked(defined, subject)))
                candidates.append(_Candidate(secondary, score, len(candidates), source_id, quote, defines, weight,
                                             bool(defined), topical))
        return candidates

    def _one_per_provision(self, candidates: list[_Candidate], chosen: list[_Candidate]) -> list[_Candidate]:
        quoted = {section_of_id(c.source_id) for c in chosen}
        best = chosen[0]
        ranked = sorted(candidates, key=lambda c: (c.secondary, -c.score * c.rank_weight, c.order))
        for candidate in ranked:
            key = section_of_id(candidate.source_id)
            if key in quoted or candidate.secondary or (best.topical and not candidate.topical):
                continue
            chosen.append(candidate)
            quoted.add(key)
        return chosen

    def _select(self, candidates: list[_Candidate], limit: int) -> list[_Candidate]:
        ranked = sorted(candidates, key=lambda c: (c.secondary, -c.score * c.rank_weight, c.order))
        best = ranked[0]
        chosen = [best]
        used = len(best.quote)
        for candidate in ranked[1:]:
            if len(chosen) >= limit:
                break
            if candidate.score < _MIN_RELATIVE_SCORE * best.score:
                continue  # ranked by weighted score: a later unit may still clear the plain-score cut-off
            if best.topical and not candidate.topical:
                # Every penalty clause earns the intent bonuses: "Whoever commits extortion shall be punished
                # with imprisonment" must not join an answer about stealing on "imprisonment" alone.
                continue
            if candidate.secondary and not best.secondary:
                break  # complete units exist; a heading or a chunk's cut-off edge would mislead
            if used + len(candidate.quote) > self._char_budget:
                continue
            if any(candidate.quote.lower() in c.quote.lower() for c in chosen):
                continue
            if best.defines == 1.0 and candidate.defines < 1.0 and candidate.defines_a_term:
                continue  # the asked term is defined; definitions of other terms are noise
            chosen.append(candidate)
            used += len(candidate.quote)
        return chosen
