"""The reader's trained models: the fine-tuned retriever and the reranker, each committed with a card.

A card names every file of the model with its sha256 (loading checks them: a changed byte is a
``ReaderModelError``, never a silent fallback to another model), the base model and its sha256, the data it was
trained on (the hand-written set's card and the bundle's files, by sha256), the training parameters and steps,
and the figures measured on the dev splits. The held-out figures are added once, after the default was chosen.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract

__all__ = ["ReaderModelCard", "RerankCalibration"]


class RerankCalibration(Contract):
    """The reranker's logit and the candidate's place in the fused list made into P(the candidate is the asked
    provision): ``sigmoid(slope * logit + prior / fused_rank + intercept)``, fitted on dev by logistic regression.
    The prior keeps what retrieval already knew (a fine-tuned retriever's first candidate is often right) in the
    order the reranker gives."""

    slope: float
    intercept: float
    prior: float = 0.0
    fitted_on: str
    """Which split and how many candidates (e.g. "dev: 1,010 questions x top 20")."""


class ReaderModelCard(Contract):
    kind: Literal["reader_model_card.v1"] = "reader_model_card.v1"
    role: Literal["retriever", "reranker"]
    name: str
    files: tuple[tuple[str, str], ...]
    """(file name in the model's folder, sha256)."""
    layers: int = Field(ge=1, le=6)
    max_tokens: int = Field(ge=16, le=512)
    base_model: str
    base_model_sha256: str
    data: tuple[tuple[str, str], ...]
    """(bundle file, sha256): the questions, passages and weights it was trained from."""
    question_set_sha256: str
    params: tuple[tuple[str, str], ...]
    steps: int
    trained_on: str
    """Where and how long ("nvidia H100, 412 s" / "CPU, 2 threads")."""
    dev: tuple[tuple[str, float], ...] = ()
    """Figures on the dev splits (name, value), before and after."""
    calibration: RerankCalibration | None = None
    notes: str = ""
