"""Generation hand-offs: the policy, the raw draft (audit only) and the validated Answer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract
from contracts.provisions import Successor

__all__ = [
    "DEFAULT_REFUSAL",
    "DEFAULT_INDICATOR_PHRASES",
    "DEFAULT_KEY_TERMS",
    "AnswerStatus",
    "GenerationPolicy",
    "CheckResult",
    "SentenceReport",
    "Citation",
    "DraftAnswer",
    "Answer",
]

DEFAULT_REFUSAL = "I cannot answer based on the provided documents."

AnswerStatus = Literal[
    "success",
    "insufficient_context",
    "low_confidence",
    "hallucination_detected",
    "invalid_citations",
    "error",
]

DEFAULT_INDICATOR_PHRASES: tuple[str, ...] = (
    "as we know",
    "as is well known",
    "it is well known",
    "well-known",
    "in general",
    "generally speaking",
    "typically",
    "usually",
    "common knowledge",
    "everyone knows",
    "based on general knowledge",
    "based on my knowledge",
    "from my knowledge",
    "i think",
    "i believe",
    "it might be",
    "probably",
    "in my opinion",
    "as an ai",
    "commonly known",
    "it is likely",
    "presumably",
)

# Words whose presence changes what a claim says (penalty kinds, negation, limits): a sentence may use one
# only if a chunk it cites uses it too, however high its word overlap ("the punishment is death").
DEFAULT_KEY_TERMS: tuple[str, ...] = (
    "death",
    "life",
    "imprisonment",
    "fine",
    "rigorous",
    "transportation",
    "forfeiture",
    "whipping",
    "bailable",
    "cognizable",
    "compoundable",
    "not",
    "never",
    "no",
    "cannot",
    "neither",
    "nor",
    "minimum",
    "maximum",
    "exceed",
)


class GenerationPolicy(Contract):
    """Every knob of the grounding contract. Its hash is part of the generate/validate cache keys."""

    kind: Literal["generation_policy.v4"] = "generation_policy.v4"
    refusal_text: str = DEFAULT_REFUSAL
    min_confidence: float = Field(default=0.3, ge=0.0, le=1.0)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, gt=0)
    min_coverage: float = Field(default=0.30, ge=0.0, le=1.0)
    multi_citation_factor: float = Field(default=0.70, gt=0.0, le=1.0)
    max_length_ratio: float = Field(default=2.0, gt=0.0)
    check_sufficiency: bool = True
    check_alignment: bool = True
    """Refuse before generation when no chunk carries the question's specifics
    (``stages.grounding.question_alignment``)."""
    check_numbers: bool = True
    check_completeness: bool = True
    indicator_phrases: tuple[str, ...] = DEFAULT_INDICATOR_PHRASES
    quarantine_flagged: bool = True
    max_answer_sentences: int = Field(default=4, gt=0)
    """Upper bound on sentences the extractive backend composes."""
    check_key_terms: bool = True
    key_terms: tuple[str, ...] = DEFAULT_KEY_TERMS
    """Claim-changing words a sentence may use only when a chunk it cites uses them too."""
    verify: bool = False
    """Read the evidence with citebound's trained verifier (``stages.grounding.answerability``, the claim-support
    check of ``stages.grounding.validate``). Off by default: the model trained so far (README, "The verifier")
    does not yet beat the word checks on the dev sets (IPC dev right .76 -> .53 at the dev-chosen thresholds), so
    a project turns it on deliberately (``citebound settings``, or the eval's ``--verifier``). Off, only the
    word-matching checks run: an explicit choice, recorded with every answer's policy, never a fallback."""
    # Both thresholds chosen on dev halves only (bench/verifier_tune.py: SQuAD dev, HaluEval 0-249, IPC dev).
    min_answerability: float = Field(default=0.2, ge=0.0, le=1.0)
    """The verifier's P(answers) some passage must reach before anything is generated (else ``not_answerable``)."""
    min_support: float = Field(default=0.2, ge=0.0, le=1.0)
    """The verifier's P(supports) each answer sentence must reach against the chunks it cites (else
    ``claim_not_supported``)."""
    close_answerability_margin: float = Field(default=0.1, ge=0.0, le=1.0)
    """Two provisions both reaching ``min_answerability`` within this margin of each other are both answered,
    each with the condition that separates them."""
    name_successors: bool = True
    """Look up, in the store's successor maps, the provisions that replaced the ones an answer cites: fetch their
    text into the pack, name each in one checked line citing it, and answer a question that asks for one from
    the map (``stages.provisions.successors``)."""


class CheckResult(Contract):
    """Outcome of one named check. ``reason_code`` is stable and machine-readable."""

    name: str
    passed: bool
    reason_code: str | None = None
    detail: str | None = None


class SentenceReport(Contract):
    sentence: str
    cited_ids: tuple[str, ...]
    coverage: float | None = None
    exempt: bool = False
    checks: tuple[CheckResult, ...] = ()


class Citation(Contract):
    """A citation resolved to where a person can check it."""

    source_id: str
    filename: str
    page: int
    page_end: int
    section_id: str | None = None
    section_title: str | None = None
    chunk_id: str
    doc_hash: str
    successors: tuple[Successor, ...] = ()
    """The provisions of a newer code that replaced this one, by the store's successor map (code, section, the
    chunks of theirs in the pack, commencement). Empty when no map names one."""


class DraftAnswer(Contract):
    """The untrusted raw output of a generator, kept only for audit: never shown as an answer."""

    kind: Literal["draft_answer.v2"] = "draft_answer.v2"
    query: str
    backend: str
    model: str
    prompt_sha256: str
    """sha256 of ``prompt`` (of "" for a backend that sends none)."""
    raw_text: str
    request_sha256: str = ""
    """The content hash of the typed ``GenerationRequest`` the generator was given ("" in drafts from before
    the typed port)."""
    prompt: str = ""
    """The prompt the generator sent, verbatim ("" for a backend that sends none, and in older drafts)."""


class Answer(Contract):
    """What the user gets: a grounded answer (``status == "success"``) or the refusal sentence with a reason."""

    kind: Literal["answer.v4"] = "answer.v4"
    query: str
    status: AnswerStatus
    answer: str
    citations: tuple[Citation, ...] = ()
    sources: tuple[str, ...] = ()
    related: tuple[Citation, ...] = ()
    """A success's pack sources that it does not cite, in retrieval order: often the neighbouring provision
    (s.324 beside s.323), listed so a reader whose case the cited one does not fit can check them. The answer
    claims nothing about them. Empty on refusals. (Additive: answers stored before it read as having none.)"""
    refusal_reason: str | None = None
    reason_code: str | None = None
    checks: tuple[CheckResult, ...] = ()
    sentences: tuple[SentenceReport, ...] = ()
    confidence: float | None = None
    answerability: float | None = None
    """The verifier's P(answers) of the best passage, when it read the pack (on refusals too): how sure citebound
    is that the evidence holds the answer."""
    backend: str | None = None
    run_id: str | None = None
    """Bound at the edge (CLI/API) from the run record; stored artifacts keep it None so replays stay byte-identical."""

    @property
    def grounded(self) -> bool:
        return self.status == "success"
