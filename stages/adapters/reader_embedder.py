"""The reader's retriever: all-MiniLM-L6-v2 fine-tuned here on the hand-written questions, on ONNX Runtime.

The model folder (``models/reader/retriever/``) holds the trained weights other than the word table, in fp16
safetensors parts, and ``card.json`` (every file's sha256, the base model's sha256, the data and the dev
figures). The word table stayed frozen in training, so the package's own table completes the model exactly.
On first use the weights are checked against the card, merged with the package's and written as an ONNX graph
by the same exporter as the base model (``onnx_embedder.export_minilm``) into the model cache, keyed by the
card's files; later loads hash-check that graph. Encoding is the base embedder's (same tokenizer, pooling and
normalisation).

Its identity differs from the base model's (``MODEL_NAME`` and a revision from the card), so an index built
with one is never queried with the other: ``citebound index`` rebuilds a store's index with this embedder.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from contracts.errors import ReaderModelError
from stages.adapters import onnx_runtime
from stages.adapters.minilm import model_dir
from stages.adapters.onnx_embedder import EXPORT_VERSION, OnnxMiniLMEmbedder, export_minilm
from stages.adapters.reader_card import checked_files, read_card

__all__ = ["OnnxReaderEmbedder", "MODEL_NAME", "merged_weights"]

MODEL_NAME = "citebound/minilm-l6-reader"
_WORD_TABLE = "embeddings.word_embeddings.weight"


def merged_weights(folder: Path, prefix: str = "") -> dict[str, np.ndarray]:
    """The package's float32 weights with the trained ones of ``folder`` (names under ``prefix``) laid over them."""
    from safetensors.numpy import load_file

    card = read_card(folder)
    files = checked_files(folder, card)
    base_file = model_dir() / "model.safetensors"
    with base_file.open("rb") as fh:
        base_sha = hashlib.file_digest(fh, "sha256").hexdigest()
    if base_sha != card.base_model_sha256:
        raise ReaderModelError(f"the installed base model's weights (sha256 {base_sha[:12]}…) are not the ones "
                               f"{folder.name}/ was trained from ({card.base_model_sha256[:12]}…)")
    weights = {k: v for k, v in load_file(str(base_file)).items() if k != "embeddings.position_ids"}
    trained = {}
    for name, path in files.items():
        if name.endswith(".safetensors"):
            trained.update(load_file(str(path)))
    for key, value in trained.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        if name not in weights or weights[name].shape != value.shape:
            raise ReaderModelError(f"{folder.name}/: trained weight {key} does not fit the base model")
        weights[name] = value.astype(np.float32)
    return weights


class OnnxReaderEmbedder(OnnxMiniLMEmbedder):
    """``stages.ports.Embedder`` over the fine-tuned retriever in ``model_folder`` (same encoding as the base)."""

    def __init__(self, cache_dir: str | Path, model_folder: str | Path, *, threads: int = 1,
                 batch_size: int = 32) -> None:
        super().__init__(cache_dir, threads=threads, batch_size=batch_size)
        self._folder = Path(model_folder)
        self._revision: str | None = None

    @property
    def model_name(self) -> str:
        return MODEL_NAME

    @property
    def model_revision(self) -> str:
        """``reader+`` and 12 hex of the sha256 over the card's files: another training is another revision."""
        if self._revision is None:
            card = read_card(self._folder)
            digest = hashlib.sha256("".join(f"{n}:{s};" for n, s in card.files).encode()).hexdigest()
            self._revision = f"reader+{digest[:12]}"
        return self._revision

    def _graph(self, *, again: bool = False) -> tuple[Path, str]:
        folder = Path(self._cache_dir).expanduser() / "minilm-reader" / f"{self.model_revision}-{EXPORT_VERSION}"
        record_path = folder / "model.json"
        if not again:
            try:
                record = json.loads(record_path.read_text(encoding="utf-8"))
                if record.get("model_revision") == self.model_revision and record.get("export") == EXPORT_VERSION:
                    return folder / "model.onnx", str(record["sha256"])
            except (OSError, ValueError, KeyError):
                pass  # absent or unreadable: write it
        sha = onnx_runtime.write_model(folder / "model.onnx", export_minilm(weights=merged_weights(self._folder)))
        record = {"sha256": sha, "model_name": MODEL_NAME, "model_revision": self.model_revision,
                  "export": EXPORT_VERSION}
        onnx_runtime.write_model(record_path, json.dumps(record, indent=1, sort_keys=True).encode())
        return folder / "model.onnx", sha
