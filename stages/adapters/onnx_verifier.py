"""citebound's trained verifier, run by onnxruntime on the CPU (implements ``stages.ports.Verifier``).

The model is a 6-layer MiniLM cross-encoder trained here (``citebound train-verifier``) and shipped as an int8
ONNX graph in ``models/verifier/`` with its tokenizer and ``card.json``. Loading checks both files against the
card's sha256: a missing or altered file is a ``contracts.errors.VerifierLoadError`` naming the file, never a
silent fallback.

Pairs become token ids in one function, ``encode_pairs``, used by training too, so the runtime reads pairs
exactly as the model was trained on them. The session loads lazily (``warm_up()`` or the first score), once per
process and model folder.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contracts.errors import VerifierLoadError
from contracts.verifier import VerifierCard, VerifierPair, render_pair
from stages.adapters.onnx_runtime import OnnxModelError, load_session, sha256_file

__all__ = ["OnnxVerifier", "encode_pairs", "load_tokenizer", "pad_batch", "read_card"]


def load_tokenizer(path: Path, max_tokens: int) -> Any:
    """A ``tokenizers.Tokenizer`` from ``tokenizer.json`` that truncates pairs to ``max_tokens`` (longest first)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens, strategy="longest_first")
    return tokenizer


def encode_pairs(tokenizer: Any, pairs: Sequence[VerifierPair]) -> list[tuple[list[int], list[int]]]:
    """(input ids, token type ids) per pair: ``[CLS] first [SEP] second [SEP]`` as ``render_pair`` renders it."""
    rendered = [render_pair(p) for p in pairs]
    return [(e.ids, e.type_ids) for e in tokenizer.encode_batch(rendered)]


def pad_batch(encoded: Sequence[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
    """The model's inputs for a batch, padded to its longest pair."""
    width = max(len(ids) for ids, _ in encoded)
    ids = np.zeros((len(encoded), width), dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for row, (token_ids, type_ids) in enumerate(encoded):
        ids[row, : len(token_ids)] = token_ids
        types[row, : len(type_ids)] = type_ids
        mask[row, : len(token_ids)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


_sessions: dict[str, tuple[Any, Any]] = {}
_sessions_lock = threading.Lock()


def read_card(model_dir: Path) -> VerifierCard:
    """The model folder's ``card.json``, validated (no file hashes checked yet)."""
    card_path = Path(model_dir) / "card.json"
    try:
        return VerifierCard.model_validate_json(card_path.read_bytes())
    except FileNotFoundError as exc:
        raise VerifierLoadError(f"verifier model card missing: {card_path.name} in {Path(model_dir).name}/") from exc
    except ValueError as exc:
        raise VerifierLoadError(f"verifier model card unreadable: {card_path.name}: {str(exc)[:200]}") from exc


class OnnxVerifier:
    """Scores pairs with the model in ``model_dir``: probabilities in [0, 1], in the order given.

    ``threads`` is onnxruntime's intra-op thread count (1 in a query-serving process, where other work shares
    the cores). ``batch_size`` is 1 by default, each pair run alone: the int8 graph quantises activations
    with ranges read from the whole batch, so in batches a pair's score moved with its batch-mates (by up to
    0.044 in ``tests/stages/adapters/test_onnx_verifier.py``), and a passage's answerability must not depend on
    which other passages share its pack. Alone, no pair is padded either; larger batches (pairs of similar
    length together) are for measuring only (``bench/verifier.py``).
    """

    def __init__(self, model_dir: Path, *, threads: int = 1, batch_size: int = 1) -> None:
        self._dir = Path(model_dir)
        self._threads = threads
        self._batch_size = batch_size
        self._card: VerifierCard | None = None

    @property
    def card(self) -> VerifierCard:
        if self._card is None:
            self._card = read_card(self._dir)
        return self._card

    @property
    def name(self) -> str:
        return f"citebound-verifier:{self.card.model_sha256[:12]}"

    @property
    def model(self) -> str:
        """The model file's sha256: what decides the scores (it goes into stage versions)."""
        return self.card.model_sha256

    def warm_up(self) -> None:
        """Load and hash-check the model now, and run one pair so the first real score is not the slow one."""
        self.score([VerifierPair(task="answers", text="warm up?", passage="warm up.")])

    def _load(self) -> tuple[Any, Any]:
        key = f"{self._dir.resolve()}:{self._threads}"
        with _sessions_lock:
            if key not in _sessions:
                _sessions[key] = self._open()
            return _sessions[key]

    def _open(self) -> tuple[Any, Any]:
        # The graph goes through the one ONNX Runtime of the process (``onnx_runtime.load_session``: bytes read
        # once, hash-checked, then loaded); the tokenizer is checked here. Messages name the file, not its path.
        card = self.card
        for name in (card.model_file, card.tokenizer_file):
            if not (self._dir / name).is_file():
                raise VerifierLoadError(f"verifier file missing: {name}")
        if sha256_file(self._dir / card.tokenizer_file) != card.tokenizer_sha256:
            raise VerifierLoadError(f"verifier file corrupt: {card.tokenizer_file} does not match its sha256 "
                                    f"{card.tokenizer_sha256[:12]}…")
        try:
            session = load_session(self._dir / card.model_file, card.model_sha256, threads=self._threads)
        except OnnxModelError as exc:
            why = str(exc).split(": ", 1)[-1]  # the runtime's message after the path
            raise VerifierLoadError(f"verifier file corrupt or unloadable: {card.model_file}: {why[:200]}") from exc
        return session, load_tokenizer(self._dir / card.tokenizer_file, card.max_tokens)

    def score(self, pairs: Sequence[VerifierPair]) -> tuple[float, ...]:
        """P(passage answers the question / supports the claim) for each pair."""
        if not pairs:
            return ()
        session, tokenizer = self._load()
        encoded = encode_pairs(tokenizer, pairs)
        # With batch_size > 1, similar lengths go together (padding is most of the cost of a mixed batch).
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]))
        logits = np.zeros(len(encoded), dtype=np.float64)
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out = session.run(None, pad_batch([encoded[i] for i in rows]))[0]
            logits[rows] = np.asarray(out, dtype=np.float64).reshape(-1)
        return tuple(float(p) for p in 1.0 / (1.0 + np.exp(-logits)))
