"""The reader's training questions: what a local instruct model is asked, what it wrote, and the set's card.

A provision of a statute (or a section of a textbook) is turned into questions a layperson would ask that it
answers. The model is asked through citebound's own text port (``CompletionRequest`` -> ``Generation``), against
an OpenAI-compatible server on loopback, deterministically (temperature 0, a fixed seed); each provision's output
is stored as a ``QuestionBatch`` keyed by the model's sha256, the request and the provision text, so a long run
resumes where it stopped. The set that results is committed as data with a ``QuestionSetCard``: the generator,
its prompt, its seed, the counts and the sha256 of the file.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract

__all__ = [
    "CompletionRequest",
    "Provision",
    "QuestionOrigin",
    "GeneratedQuestion",
    "DroppedQuestion",
    "QuestionBatch",
    "QuestionSetCard",
]


class CompletionRequest(Contract):
    """One chat completion for a text generator that is not answering a user's question (data making)."""

    kind: Literal["completion_request.v1"] = "completion_request.v1"
    system: str
    user: str
    examples: tuple[tuple[str, str], ...] = ()
    """Worked examples shown before ``user``: (what was asked, what the model should reply), as earlier turns."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    seed: int = 0
    max_tokens: int = Field(default=256, ge=1, le=4096)


class Provision(Contract):
    """One provision of a code (a section, its heading, its text and the scenarios its drafters attached)."""

    kind: Literal["provision.v1"] = "provision.v1"
    code: str
    """The code or Act it belongs to, as citebound names it ("IPC", "BNS", "Minimum Wages Act")."""
    section: str
    title: str
    text: str
    illustrations: tuple[str, ...] = ()
    """The drafters' own scenarios ("A, a police officer, ... A is not guilty ..."), one per item."""

    @property
    def key(self) -> str:
        return f"{self.code}:{self.section}"


QuestionOrigin = Literal["illustration", "provision", "scenario"]


class GeneratedQuestion(Contract):
    """A question a model wrote for a provision, and what it was made from."""

    question: str
    code: str
    section: str
    origin: QuestionOrigin
    """Rewritten by the model from one of the provision's illustrations or written from its text; or
    ``scenario``: made by rule from an illustration (its facts, the drafters' verdict removed, a lay question
    added), no model involved."""
    seed_sha256: str
    """sha256 of the text it was made from (the illustration, or the provision's text)."""


class DroppedQuestion(Contract):
    """A line the model wrote that a rule dropped, with the rule's name."""

    text: str
    rule: str


class QuestionBatch(Contract):
    """One request's output: the raw text, the questions kept and those dropped by rule."""

    kind: Literal["question_batch.v1"] = "question_batch.v1"
    provision_key: str
    origin: QuestionOrigin
    model_sha256: str
    request_sha256: str
    raw: str
    questions: tuple[GeneratedQuestion, ...] = ()
    dropped: tuple[DroppedQuestion, ...] = ()
    seconds: float = 0.0


class QuestionSetCard(Contract):
    """What a committed question set is: its generator, prompt, seed, counts and file hash."""

    kind: Literal["question_set_card.v1"] = "question_set_card.v1"
    generator: str
    """The model, as a person would name it."""
    generator_sha256: str
    prompt_sha256: tuple[tuple[QuestionOrigin, str], ...]
    """sha256 of each prompt template (system + user template), by origin."""
    seed: int
    temperature: float
    sources: tuple[tuple[str, str], ...]
    """(source file, sha256) of every statute the provisions were read from."""
    provisions: int
    requests: int
    questions: int
    dropped_by_rule: tuple[tuple[str, int], ...]
    by_origin: tuple[tuple[str, int], ...]
    file: str
    file_sha256: str
    generation_seconds: float
    hand_check: str = ""
    """The result of reading a random sample by hand (share answerable from its provision and plainly worded)."""
