"""The reader's hand-written questions: one question as its writer wrote it, and the committed set's card.

The questions are written by people (the project's authors), section by section with the provision's text in
view, following ``shared/QUESTION_WRITING.md``: lay questions (a situation in everyday words), law-student
questions (the statute's own terms), near misses (they sound like one section, another answers them) and
questions the code does not answer. Each names its gold section and the facts a right answer must contain. The
set is committed as JSONL files with a ``HandwrittenSetCard`` (who wrote it, how it was checked, counts, sha256).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from contracts._base import Contract

__all__ = ["QuestionKind", "HandwrittenQuestion", "HandwrittenSetCard", "SliceCheck"]

QuestionKind = Literal["lay", "student", "near_miss", "no_answer"]


class HandwrittenQuestion(Contract):
    """One question and its gold: the section whose text answers it (``None`` when the code does not)."""

    id: str = Field(min_length=3, max_length=80)
    question: str = Field(min_length=8, max_length=600)
    kind: QuestionKind
    code: str = Field(min_length=2, max_length=80)
    section: str | None
    sounds_like: str | None = None
    """For near misses and unanswered questions: the section the question was written against."""
    facts: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    """For a textbook question: the sentence(s) of the chapter that answer it, copied exactly (its ``section`` is
    then ``"text"``: the chunk that holds them is found where the chapter is ingested, whatever the chunking)."""
    writer: str = Field(min_length=1, max_length=40)

    @model_validator(mode="after")
    def _gold_fits_kind(self) -> HandwrittenQuestion:
        if self.kind == "no_answer" and self.section is not None:
            raise ValueError(f"{self.id}: a no_answer question has no gold section")
        if self.kind != "no_answer" and not self.section:
            raise ValueError(f"{self.id}: a {self.kind} question names its gold section")
        return self


class SliceCheck(Contract):
    """A second reader's check of a random share of one writer's slice, against the text."""

    slice: str
    checked: int
    agree: int
    fixed: int
    dropped: int


class HandwrittenSetCard(Contract):
    """What the committed hand-written set is: its authors, checks, counts, splits and files."""

    kind: Literal["handwritten_set_card.v1"] = "handwritten_set_card.v1"
    written_by: str
    method: str
    sources: tuple[tuple[str, str], ...]
    """(source file, sha256) of every text the questions were written against."""
    files: tuple[tuple[str, str], ...]
    """(file under models/reader/handwritten/, sha256)."""
    questions: int
    by_code: tuple[tuple[str, int], ...]
    by_kind: tuple[tuple[str, int], ...]
    sections_covered: tuple[tuple[str, int], ...]
    dropped: tuple[tuple[str, int], ...]
    """Questions removed before training, by reason (an invalid gold, a near copy of an eval item, ...)."""
    checks: tuple[SliceCheck, ...]
    agreement: float
    split_seed: int
    dev_share: float
    unseen_codes: tuple[str, ...]
    """Codes held out of training whole: the unseen-document dev split."""
    split_counts: tuple[tuple[str, int], ...]
