"""The reader's reranker: a MiniLM cross-encoder trained here on the hand-written questions, on ONNX Runtime.

The model folder (``models/reader/reranker/``) holds an int8 ONNX graph (inputs ``input_ids``,
``attention_mask``, ``token_type_ids``; output ``logits``, one per pair), the tokenizer it was trained with and
``card.json``; loading checks every file against the card (``reader_card``). A pair is ``[CLS] question [SEP]
passage [SEP]``, truncated longest-first to the card's ``max_tokens``.

Scores are the card's calibration (a logistic regression fitted on the dev split over the logit and the
candidate's fused rank) of the logits: the probability that the passage is the provision asked about. The pair
is read as the mean of its token states (the pooling the encoder was trained with), not the [CLS] state. All candidates of one question run as one batch, put in a fixed
order first (by passage text), because the int8 graph quantises activations with ranges read from the whole
batch: the same question and candidates give the same scores whatever order the caller lists them in.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contracts.errors import ReaderModelError
from contracts.reader import ReaderModelCard
from stages.adapters.onnx_runtime import OnnxModelError, load_session
from stages.adapters.reader_card import checked_files, read_card

__all__ = ["OnnxReranker"]


class OnnxReranker:
    """``stages.ports.Reranker`` over the model in ``model_folder``."""

    def __init__(self, model_folder: str | Path, *, threads: int = 1, pool: int = 20) -> None:
        self._folder = Path(model_folder)
        self._threads = threads
        self._pool = pool
        self._card: ReaderModelCard | None = None
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    @property
    def card(self) -> ReaderModelCard:
        if self._card is None:
            self._card = read_card(self._folder)
        return self._card

    @property
    def model(self) -> str:
        """The graph file's sha256: what decides the scores."""
        return next(sha for name, sha in self.card.files if name.endswith(".onnx"))

    @property
    def pool(self) -> int:
        return self._pool

    def warm_up(self) -> None:
        self.score("warm up?", ["warm up."], [1])

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    from tokenizers import Tokenizer

                    card = self.card
                    files = checked_files(self._folder, card)
                    graph = next(n for n in files if n.endswith(".onnx"))
                    try:
                        session = load_session(files[graph], self.model, threads=self._threads)
                    except OnnxModelError as exc:
                        raise ReaderModelError(f"reranker graph unloadable: {graph}: {str(exc)[-200:]}") from exc
                    tokenizer = Tokenizer.from_file(str(files["tokenizer.json"]))
                    tokenizer.no_padding()
                    tokenizer.enable_truncation(max_length=card.max_tokens, strategy="longest_first")
                    self._loaded = (session, tokenizer)
        return self._loaded

    def logits(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """The raw logit of each (question, passage) pair, in the order given."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        session, tokenizer = self._load()
        order = sorted(range(len(passages)), key=lambda i: (passages[i], i))
        encoded = tokenizer.encode_batch([(question, passages[i]) for i in order])
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = e.ids
            types[row, : len(e.ids)] = e.type_ids
            mask[row, : len(e.ids)] = 1
        out = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0].reshape(-1)
        logits = np.empty(len(passages), dtype=np.float32)
        logits[order] = out
        return logits

    def score(self, question: str, passages: Sequence[str], ranks: Sequence[int]) -> tuple[float, ...]:
        """``sigmoid(slope * logit + prior / rank + intercept)`` with the card's calibration (plain sigmoid of the
        logit without one)."""
        cal = self.card.calibration
        slope, intercept, prior = (cal.slope, cal.intercept, cal.prior) if cal else (1.0, 0.0, 0.0)
        return tuple(1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, slope * float(x) + prior / r + intercept))))
                     for x, r in zip(self.logits(question, passages), ranks, strict=True))
