"""all-MiniLM-L6-v2 on ONNX Runtime: the encoder citebound embeds chunks and queries with, no torch anywhere.

**The graph** is written once from the installed package's own weights (``model.safetensors``) by
``export_minilm``: BERT's embeddings, six encoder layers (self-attention with the padding mask, GELU with erf,
LayerNorm at eps 1e-12) as plain ONNX operators (opset 17), float32, output the last hidden state. The bytes
are deterministic (same weights, same ``onnx``: same sha256). Writing it needs ``onnx`` and ``safetensors``, not
torch, so even the first query on a new machine never imports torch.

**The cache.** ``ensure_exported(cache_dir)`` keeps ``<cache_dir>/minilm/<revision>-<EXPORT_VERSION>/`` with
``model.onnx`` and ``model.json`` (its sha256, the model's identity, the exporter's version), both written
atomically, the graph before the record that vouches for it. Loading goes through ``onnx_runtime.load_session``,
which checks the file against the recorded sha256; a file found changed or damaged is written again from the
weights once (a cache, not a source of truth), and a second mismatch raises ``OnnxModelError``.

**Encoding** is sentence-transformers' own recipe, so vectors match the torch encoder (``st_embedder``) to
~1e-7 cosine (tested to 1e-6 on the eval corpora; the issue asked 1e-4): tokens from the package's
``tokenizer.json`` by the ``tokenizers`` library, truncated at 256 tokens with [CLS]/[SEP] (the length
sentence-transformers uses), texts stripped; inputs sorted longest first and batched, each batch padded to its
longest; mean pooling over the attention mask; L2 normalisation. Same identity as the torch encoder
(``stages.adapters.minilm``), so stored vectors and saved indexes stay valid.

Threads: ``threads=1`` (query-serving processes: no pool, no spinning, concurrent calls side by side) or
``threads=0`` (batch ingestion: ONNX Runtime's choice, one per core). Nothing loads at import or in
``__init__``; the session loads on ``warm_up()`` or the first ``embed``, once per process (shared through
``onnx_runtime``'s cache by every instance with the same file and threads).

>>> embedder = OnnxMiniLMEmbedder("/nonexistent/cache")
>>> (embedder.model_name, embedder.dim)
('sentence-transformers/all-MiniLM-L6-v2', 384)
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stages.adapters import onnx_runtime
from stages.adapters.minilm import MAX_SEQ_LENGTH, MODEL_DIM, MODEL_NAME, MiniLMIdentity, model_dir, model_revision

__all__ = ["OnnxMiniLMEmbedder", "export_minilm", "ensure_exported", "EXPORT_VERSION"]

# The exporter's own version: part of the cache folder's name, bumped when export_minilm writes another graph.
EXPORT_VERSION = "minilm-onnx.v1"
_LOG = logging.getLogger("citebound.onnx")
_HEADS = 12
_LAYERS = 6


def export_minilm(folder: Path | None = None, weights: dict[str, np.ndarray] | None = None) -> bytes:
    """The ONNX graph (serialized ModelProto) of the BERT encoder in ``folder`` (default: the packaged model), or
    of the float32 ``weights`` given (the same names: a fine-tuned copy of the model).

    Inputs ``input_ids`` and ``attention_mask`` (int64, [batch, seq]); output ``last_hidden_state`` (float32,
    [batch, seq, 384]). Token type ids are all 0 for one-segment inputs, so that embedding is folded into the
    position table.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    if weights is None:
        weights = load_file(str((folder or model_dir()) / "model.safetensors"))
    hidden = weights["embeddings.word_embeddings.weight"].shape[1]
    head_dim = hidden // _HEADS
    initializers: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, array: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{kind.lower()}_{len(nodes)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        w = const(f"{prefix}.weight_t", weights[f"{prefix}.weight"].T)
        return op("Add", [op("MatMul", [x, w]), const(f"{prefix}.bias", weights[f"{prefix}.bias"])])

    def layer_norm(x: str, prefix: str) -> str:
        scale, bias = const(f"{prefix}.weight", weights[f"{prefix}.weight"]), const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-12)

    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    f32 = lambda v: np.array(v, dtype=np.float32)  # noqa: E731
    const("word_table", weights["embeddings.word_embeddings.weight"])
    const("position_table", weights["embeddings.position_embeddings.weight"]
          + weights["embeddings.token_type_embeddings.weight"][0])
    for name, value in (("i0", i64(0)), ("i1", i64(1)), ("i2", i64(2)), ("split_heads", i64(0, 0, _HEADS, head_dim)),
                        ("merge_heads", i64(0, 0, hidden)), ("mask_axes", i64(1, 2))):
        const(name, value)
    for name, value in (("one", f32(1.0)), ("half", f32(0.5)), ("inv_sqrt2", f32(1 / np.sqrt(2.0))),
                        ("score_scale", f32(1 / np.sqrt(head_dim))), ("masked", f32(np.finfo(np.float32).min))):
        const(name, value)

    seq_len = op("Slice", [op("Shape", ["input_ids"]), "i1", "i2", "i0"])
    x = op("Add", [op("Gather", ["word_table", "input_ids"]), op("Slice", ["position_table", "i0", seq_len, "i0"])])
    x = layer_norm(x, "embeddings.LayerNorm")
    # Padding positions get the float32 minimum added to their attention scores (as transformers does).
    keep = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = op("Unsqueeze", [op("Mul", [op("Sub", ["one", keep]), "masked"]), "mask_axes"])
    for i in range(_LAYERS):
        p = f"encoder.layer.{i}."

        def heads(t: str, perm: list[int]) -> str:
            return op("Transpose", [op("Reshape", [t, "split_heads"])], perm=perm)

        q = heads(linear(x, p + "attention.self.query"), [0, 2, 1, 3])
        k = heads(linear(x, p + "attention.self.key"), [0, 2, 3, 1])
        v = heads(linear(x, p + "attention.self.value"), [0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), "score_scale"]), mask])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), "merge_heads"])
        x = layer_norm(op("Add", [linear(context, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = op("Mul", [op("Mul", [h, "half"]), op("Add", [op("Erf", [op("Mul", [h, "inv_sqrt2"])]), "one"])])
        x = layer_norm(op("Add", [linear(h, p + "output.dense"), x]), p + "output.LayerNorm")
    nodes[-1].output[0] = "last_hidden_state"
    graph = helper.make_graph(
        nodes, "all_minilm_l6_v2",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="citebound",
                              producer_version=EXPORT_VERSION)
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _cache_folder(cache_dir: Path) -> Path:
    return Path(cache_dir).expanduser() / "minilm" / f"{model_revision()}-{EXPORT_VERSION}"


def _export_into(folder: Path) -> tuple[Path, str]:
    path = folder / "model.onnx"
    sha = onnx_runtime.write_model(path, export_minilm())
    record = {"sha256": sha, "model_name": MODEL_NAME, "model_revision": model_revision(), "export": EXPORT_VERSION}
    onnx_runtime.write_model(folder / "model.json", json.dumps(record, indent=1, sort_keys=True).encode())
    _LOG.info("wrote the MiniLM ONNX graph to %s (sha256 %s)", path, sha[:12])
    return path, sha


def ensure_exported(cache_dir: Path, *, again: bool = False) -> tuple[Path, str]:
    """(path, sha256) of the cached MiniLM graph, written from the package's weights when absent (or ``again``)."""
    folder = _cache_folder(cache_dir)
    if not again:
        try:
            record = json.loads((folder / "model.json").read_text(encoding="utf-8"))
            if record.get("export") == EXPORT_VERSION and record.get("model_revision") == model_revision():
                return folder / "model.onnx", str(record["sha256"])
        except (OSError, ValueError, KeyError):
            pass  # absent or unreadable: write it
    return _export_into(folder)


class OnnxMiniLMEmbedder(MiniLMIdentity):
    """``stages.ports.Embedder`` over all-MiniLM-L6-v2 on ONNX Runtime: float32, L2-normalised, batched, CPU."""

    def __init__(self, cache_dir: str | Path, *, threads: int = 1, batch_size: int = 32) -> None:
        self._cache_dir = Path(cache_dir)
        self._threads = threads
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def threads(self) -> int:
        return self._threads

    def _load(self) -> tuple[Any, Any]:
        if self._session is not None:
            return self._session, self._tokenizer
        with self._lock:
            if self._session is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
                tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
                tokenizer.no_padding()
                path, sha = self._graph()
                try:
                    session = onnx_runtime.load_session(path, sha, threads=self._threads)
                except onnx_runtime.OnnxModelError as exc:
                    _LOG.warning("%s; writing the graph again from the weights", exc)
                    path, sha = self._graph(again=True)
                    session = onnx_runtime.load_session(path, sha, threads=self._threads)
                self._tokenizer, self._session = tokenizer, session
        return self._session, self._tokenizer

    def _graph(self, *, again: bool = False) -> tuple[Path, str]:
        """(path, sha256) of the cached graph this embedder runs, written when absent (or ``again``)."""
        return ensure_exported(self._cache_dir, again=again)

    def warm_up(self) -> None:
        """Load the graph (exporting it first if the cache has none) and run one encode."""
        self.embed(["warm up"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, MODEL_DIM), dtype=np.float32)
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch([str(t).strip() for t in texts])
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(texts), MODEL_DIM), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            rows = order[start:start + self._batch_size]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = int(lengths[i])
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[rows] = pooled
        return out
