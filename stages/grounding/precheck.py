"""Before generation: refuse early, without calling the LLM, when the pack cannot support an answer.

Checks, in order: the pack has usable evidence (``empty_context``), its confidence reaches the policy
threshold (``low_confidence``), its evidence fits the query type (definition, punishment, procedure,
scope, general), and one chunk carries the question's specifics (``question_detail_missing``, see
``stages.grounding.question_alignment``; switched off with ``check_sufficiency`` or on its own with
``check_alignment``). ``precheck_pack`` returns the refusal Answer or ``None`` ("go ahead").

>>> from contracts.retrieval import ContextPack, QueryAnalysis
>>> empty = ContextPack(query="q", query_analysis=QueryAnalysis(), context_text="", sources=(), chunks=(), confidence=0.0)
>>> precheck_pack(empty, GenerationPolicy()).reason_code
'empty_context'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from contracts.answer import Answer, AnswerStatus, CheckResult, GenerationPolicy
from contracts.ingest import Chunk
from contracts.retrieval import ContextPack, QueryIntent
from contracts.verifier import AnswerabilityReport
from stages.grounding.answerability import check_answerable
from stages.generation.prompt import citable_ids, prompt_chunks
from stages.grounding.question_alignment import Similarity, candidate_words, missing_in_passage, question_specifics
from stages.grounding.validate import refusal_answer
from stages.ports import Embedder
from stages.provisions.successors import asked_notes
from stages.retrieval.query_analysis import analyze_query
from stages.text.normalise import stem
from stages.text.units import content_words

__all__ = [
    "STAGE_VERSION",
    "INTENT_LANGUAGE",
    "QUESTION_WORDS",
    "query_terms",
    "is_about_query",
    "shared_terms",
    "check_pack_not_empty",
    "check_confidence",
    "check_successor_known",
    "check_definition_evidence",
    "check_punishment_evidence",
    "check_procedure_evidence",
    "check_scope_evidence",
    "check_general_evidence",
    "check_evidence_sufficiency",
    "check_question_alignment",
    "word_similarity",
    "precheck_pack",
]

STAGE_VERSION = "sufficiency.v5"

_I = re.IGNORECASE
# Language that shows a chunk can answer a question of each type.
INTENT_LANGUAGE: dict[QueryIntent, re.Pattern[str]] = {
    "definition": re.compile(
        r"\bmeans\b|\bshall\s+mean\b|\bis\s+said\s+to\b|\bare\s+said\s+to\b|\bdefined\s+as\b|\bdefines?\b"
        r"|\bdefinitions?\b|\bincludes?\b|\bdenotes?\b|\brefers\s+to\b|\b(?:is|are)\s+(?:called|known\s+as|termed)\b"
        r"|\bdeemed\s+to\s+be\b|\bthat\s+is\s+to\s+say\b"
        # A penal statute defines an offence by its elements: "Whoever ... commits forgery", "is said, except
        # ..., to defame", "Theft is “robbery” if", "designated as “grievous”".
        r"|\bcommits\b|\bis\s+said\b|\bdesignated\b|\b(?:is|are)\s+[\"\u201c\u2018]"
        # A textbook states a quantity by its formula: "the nth term ... is given by an = a + (n - 1) d".
        r"|\b(?:is|are)\s+given\s+by\b",
        _I,
    ),
    "punishment": re.compile(
        r"\bpunish(?:ed|able|ment|ments)?\b|\bimprisonment\b|\bfine[ds]?\b|\bpenalt(?:y|ies)\b|\bsentenced?\b"
        r"|\bdeath\b|\bliable\s+to\b|\bforfeit\w*\b|\bconvict(?:ed|ion)\b|\bjail\b|\brigorous\b",
        _I,
    ),
    "procedure": re.compile(
        r"\bprocedure\b|\bprocess\b|\bsteps?\b|\bmanner\b|\bapplication\b|\bappl(?:y|ied|ies)\b|\bsubmit\w*\b"
        r"|\bfil(?:e|ed|ing)\b|\bprescribed\b|\bform\b|\bnotice\b|\bappeal\b|\bpetition\b|\bcomplaint\b"
        r"|\bregist(?:er|ered|ration)\b|\bshall\s+be\s+(?:made|filed|sent|served|presented|issued)\b|\bmethod\b"
        r"|\bformula\b|\bgiven\s+by\b|\bfirst\b.*\bthen\b|\bwithin\s+\w+\s+days\b",
        _I,
    ),
    "scope": re.compile(
        r"\bextents?\b|\bextends?\s+to\b|\bappl(?:y|ies)\s+to\b|\bapplicab\w+\b|\bcome\s+into\s+force\b"
        r"|\bwhole\s+of\s+india\b|\bjurisdiction\b|\bshall\s+apply\b|\bin\s+force\b|\bcommencement\b"
        r"|\bterritor\w+\b|\bnothing\s+in\s+this\b|\bexempt\w*\b",
        _I,
    ),
}

# Words that say what kind of question it is, not what it is about.
QUESTION_WORDS: frozenset[str] = frozenset(
    stem(w)
    for w in """what which who whom how why when where explain describe define definition meaning mean means
    tell give list state punishment punishments penalty penalties punished punishable procedure process steps
    scope extent applicability apply applies applicable section sections act article question answer kind
    type please long much many someone somebody anyone anybody something thing things""".split()
)


def query_terms(pack: ContextPack) -> frozenset[str]:
    """The query's topic terms: content words of the query and of the analyser's keywords, minus question words."""
    words = content_words(pack.query) | content_words(" ".join(pack.query_analysis.keywords))
    return words - QUESTION_WORDS


def _expansion_words(pack: ContextPack) -> frozenset[str]:
    return content_words(" ".join(pack.query_analysis.expansions)) - QUESTION_WORDS


def is_about_query(pack: ContextPack, chunk_words: frozenset[str]) -> bool:
    """Whether a chunk's words show it is about the query: it shares one of the query's topic terms, or it
    shares a statute word the analyser mapped the asker's words to ("jailed for stealing" -> imprisonment,
    theft) *and* holds every topic term the map has no statute word for. So "how long can someone be jailed
    for stealing?" is about s. 379 (every term mapped), while "the punishment for killing a dog" is not about
    s. 302 (killing -> murder, but "dog" is nowhere in it): a guessed synonym may widen the evidence, never
    replace what the question is about.

    A query without topic terms is about anything.
    """
    terms = query_terms(pack)
    if not terms or shared_terms(terms, chunk_words):
        return True
    expansions = _expansion_words(pack)
    if not expansions or not shared_terms(expansions, chunk_words):
        return False
    unmapped = frozenset(t for t in terms if not _has_statute_word(t))
    return len(shared_terms(unmapped, chunk_words)) == len(unmapped)


@functools.lru_cache(maxsize=4096)
def _has_statute_word(term: str) -> bool:
    return bool(analyze_query(term).expansions)


_MIN_PREFIX = 4


def shared_terms(terms: frozenset[str], words: frozenset[str]) -> frozenset[str]:
    """Query terms found among a chunk's words, exactly or as a prefix either way ("cancel" ~ "cancell"),
    since the light stemmer does not always bring a word family to one stem.

    >>> sorted(shared_terms(frozenset({"cancel", "refund"}), frozenset({"cancell", "day"})))
    ['cancel']
    """
    found = terms & words
    for term in terms - found:
        if len(term) >= _MIN_PREFIX and any(
            len(word) >= _MIN_PREFIX and (word.startswith(term) or term.startswith(word)) for word in words
        ):
            found |= {term}
    return frozenset(found)


def _usable(pack: ContextPack, policy: GenerationPolicy) -> tuple[Chunk, ...]:
    citable = citable_ids(pack, policy)
    return tuple(c for c in prompt_chunks(pack, policy) if c.semantic_id in citable)


def check_pack_not_empty(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """The pack holds at least one citable, non-quarantined chunk with text."""
    ok = any(c.text.strip() for c in _usable(pack, policy))
    return CheckResult(name="pack_not_empty", passed=ok, reason_code=None if ok else "empty_context",
                       detail=None if ok else "no citable evidence was retrieved")


def check_successor_known(pack: ContextPack) -> CheckResult:
    """A question that asks which provision replaced another is answered from the successor map and both texts:
    every provision it asks about needs a successor whose text is in the pack. The map may say there is none
    (``no_successor``, with its nearest candidate), or name one that is not among the documents asked of
    (``successor_not_ingested``)."""
    for note in asked_notes(pack):
        if not note.successors:
            nearest = (f" (its nearest candidate, {note.to_code} {note.nearest}, scores {note.nearest_score:.2f})"
                       if note.nearest and note.nearest_score is not None else "")
            return CheckResult(name="successor_known", passed=False, reason_code="no_successor",
                               detail=f"{note.code} {note.section} has no successor in the {note.to_code} by the "
                                      f"successor map{nearest}")
        if not any(s.semantic_ids for s in note.successors):
            named = ", ".join(f"{s.code} {s.section}" for s in note.successors)
            return CheckResult(name="successor_known", passed=False, reason_code="successor_not_ingested",
                               detail=f"the successor map names {named} for {note.code} {note.section}, but its text "
                                      f"is not among the documents of this project")
    return CheckResult(name="successor_known", passed=True)


def check_confidence(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """The pack's retrieval confidence reaches ``policy.min_confidence``."""
    ok = pack.confidence >= policy.min_confidence
    return CheckResult(name="confidence", passed=ok, reason_code=None if ok else "low_confidence",
                       detail=f"confidence {pack.confidence:.2f} vs threshold {policy.min_confidence:.2f}")


def _typed_check(name: str, reason_code: str, what: str, intent: QueryIntent, pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    language = INTENT_LANGUAGE[intent]
    for chunk in _usable(pack, policy):
        # The language must sit in a chunk about the query's topic (when the query names one).
        if language.search(chunk.text) and is_about_query(pack, content_words(chunk.text)):
            return CheckResult(name=name, passed=True, detail=f"{what} in {chunk.semantic_id}")
    return CheckResult(name=name, passed=False, reason_code=reason_code,
                       detail=f"no retrieved chunk about the query contains {what}")


_STATES_AN_OFFENCE = re.compile(r"\bwhoever\b|\bshall\s+be\s+punish", re.IGNORECASE)


def check_definition_evidence(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """Definition questions need definitional language ("means", "is said to", "defined as", "includes"...),
    or a provision titled by exactly what was asked that states an offence ("Sedition": "Whoever ... shall be
    punished"): a penal code defines many offences only by the provision that punishes them. Every topic term
    must be in that title, so "anticipatory bail" is not defined by a section titled "... bail bond ..."."""
    result = _typed_check("definition_evidence", "no_definitional_language", "definitional language", "definition",
                          pack, policy)
    terms = query_terms(pack)
    if result.passed or not terms:
        return result
    for chunk in _usable(pack, policy):
        title = chunk.provenance.section_title or ""
        if title and len(shared_terms(terms, content_words(title))) == len(terms) and _STATES_AN_OFFENCE.search(chunk.text):
            return CheckResult(name="definition_evidence", passed=True,
                               detail=f"the offence titled {title!r} is stated in {chunk.semantic_id}")
    return result


def check_punishment_evidence(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """Punishment questions need penalty language ("punished with", "imprisonment", "fine", "penalty"...)."""
    return _typed_check("punishment_evidence", "no_penalty_language", "penalty language", "punishment", pack, policy)


def check_procedure_evidence(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """Procedure questions need procedural language ("procedure", "application", "shall be filed", "steps"...)."""
    return _typed_check("procedure_evidence", "no_procedural_language", "procedural language", "procedure", pack, policy)


def check_scope_evidence(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """Scope questions need extent or applicability language ("extends to", "applies to", "in force"...)."""
    return _typed_check("scope_evidence", "no_scope_language", "extent or applicability language", "scope", pack, policy)


def check_general_evidence(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """General questions need a chunk about the query (``is_about_query``)."""
    terms = query_terms(pack)
    if not terms:
        return CheckResult(name="general_evidence", passed=True, detail="the query names no content terms")
    for chunk in _usable(pack, policy):
        words = content_words(chunk.text)
        if is_about_query(pack, words):
            shared = shared_terms(terms, words)
            return CheckResult(name="general_evidence", passed=True,
                               detail=f"{len(shared)}/{len(terms)} query terms in {chunk.semantic_id}")
    return CheckResult(name="general_evidence", passed=False, reason_code="no_query_terms",
                       detail=f"no retrieved chunk contains any of: {', '.join(sorted(terms))}")


_BY_INTENT = {
    "definition": check_definition_evidence,
    "punishment": check_punishment_evidence,
    "procedure": check_procedure_evidence,
    "scope": check_scope_evidence,
    "general": check_general_evidence,
}


def word_similarity(embedder: Embedder, words: Iterable[str]) -> Similarity:
    """Cosine similarity of the given words by one ``embedder.embed`` call (vectors are L2-normalised)."""
    ordered = sorted(set(words))
    vectors = dict(zip(ordered, embedder.embed(ordered), strict=True)) if ordered else {}

    def similarity(a: str, b: str) -> float:
        va, vb = vectors.get(a), vectors.get(b)
        return float(va @ vb) if va is not None and vb is not None else 0.0

    return similarity


def check_question_alignment(pack: ContextPack, policy: GenerationPolicy, embedder: Embedder | None = None) -> CheckResult:
    """One usable chunk carries every specific of the question (quantities, names, rare terms, negation; see
    ``stages.grounding.question_alignment``). Fails with ``question_detail_missing`` naming what the best-aligned
    chunk lacks (quoted, comma-separated: ``"tropic"``). With an ``embedder``, a name or rare term missing word
    for word may be carried by a similar word (measured thresholds in ``stages.grounding.question_alignment``);
    the words are embedded only when the word-for-word test fails, in one call."""
    specifics = question_specifics(pack.query, phrasing=not policy.verify)
    if not specifics:
        return CheckResult(name="question_alignment", passed=True, detail="the question names no specifics")
    chunks = _usable(pack, policy)

    def best_missing(similarity: Similarity | None) -> tuple[str | None, tuple[str, ...]]:
        best: tuple[str, ...] = ()
        for chunk in chunks:
            missing = missing_in_passage(specifics, chunk.text, title=chunk.provenance.section_title or "",
                                         similarity=similarity)
            if not missing:
                return chunk.semantic_id, ()
            if not best or len(missing) < len(best):
                best = missing
        return None, best

    found, best = best_missing(None)
    if found is None and embedder is not None and best:
        terms = specifics.names | specifics.rare
        words = terms.union(*(candidate_words(f"{c.provenance.section_title or ''} {c.text}") for c in chunks))
        found, best = best_missing(word_similarity(embedder, words))
    if found is not None:
        return CheckResult(name="question_alignment", passed=True, detail=f"every specific of the question in {found}")
    return CheckResult(name="question_alignment", passed=False, reason_code="question_detail_missing",
                       detail=", ".join(f'"{m}"' for m in best) or "no usable evidence")


def check_evidence_sufficiency(pack: ContextPack, policy: GenerationPolicy) -> CheckResult:
    """The check for the pack's query intent (``pack.query_analysis.intent``)."""
    return _BY_INTENT[pack.query_analysis.intent](pack, policy)


def precheck_pack(
    pack: ContextPack,
    policy: GenerationPolicy,
    embedder: Embedder | None = None,
    answerability: AnswerabilityReport | None = None,
) -> Answer | None:
    """A refusal Answer when the pack is empty, under-confident, not answerable (the verifier's reading,
    ``answerability``), insufficient for the query type or misses a specific of the question; ``None`` when
    generation may go ahead. The ``embedder`` (the index's, as the answer chain passes it) lets the alignment
    check map a paraphrased word; without it the check is word for word and stricter.

    A question that asks for a successor (``stages.provisions.successors``) is answered from the map: it needs the
    successor's text in the pack (``check_successor_known``) instead of the evidence checks for a question type."""
    checks: list[CheckResult] = []
    best = answerability.best.answers if answerability is not None and answerability.best is not None else None
    steps: list[tuple[Callable[[], CheckResult], AnswerStatus]] = [
        (lambda: check_pack_not_empty(pack, policy), "insufficient_context"),
        (lambda: check_confidence(pack, policy), "low_confidence"),
    ]
    if policy.name_successors and asked_notes(pack):
        steps.append((lambda: check_successor_known(pack), "insufficient_context"))
    else:
        steps += _evidence_steps(pack, policy, embedder, answerability)
    for run_check, status in steps:
        result = run_check()
        checks.append(result)
        if not result.passed:
            refusal = refusal_answer(pack.query, status, result.reason_code or result.name,
                                     result.detail or result.name, policy, pack, tuple(checks))
            return refusal.model_copy(update={"answerability": best})
    return None


def _evidence_steps(
    pack: ContextPack, policy: GenerationPolicy, embedder: Embedder | None, answerability: AnswerabilityReport | None,
) -> list[tuple[Callable[[], CheckResult], AnswerStatus]]:
    """The checks that the evidence carries a question of its type: the verifier's reading, sufficiency and the
    question's specifics (as the policy switches them)."""
    steps: list[tuple[Callable[[], CheckResult], AnswerStatus]] = []
    if answerability is not None:
        steps.append((lambda: check_answerable(answerability, policy), "insufficient_context"))
    if policy.check_sufficiency:
        steps.append((lambda: check_evidence_sufficiency(pack, policy), "insufficient_context"))
        if policy.check_alignment:
            steps.append((lambda: check_question_alignment(pack, policy, embedder), "insufficient_context"))
    return steps
