"""The verifier's training steps: data in, checkpoints out, an int8 ONNX model and its card at the end.

Each function is one task of ``flows.train_flow``; they also run alone (a script or a test calls them
directly). Heavy imports (torch, transformers, onnx) happen inside the functions that need them, so importing
this module costs nothing.

Determinism: the pair order, each batch and the dropout masks follow from ``VerifierTrainConfig.seed``; a run
killed at any point resumes from its last checkpoint (written atomically every ``checkpoint_every`` steps) and
continues with the batches it would have seen. The checkpoint records the hashes of the config and of the
encoded pairs, and a resume against other data or another config is refused.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from contracts._base import content_sha256
from contracts.errors import ConfigError
from contracts.store import atomic_write
from contracts.verifier import LabelledPair, VerifierTrainConfig

__all__ = [
    "EncodedPairs",
    "apply_caps",
    "apply_repeats",
    "encode_training_pairs",
    "evaluate_checkpoint",
    "export_onnx",
    "split_validation",
    "train_checkpoints",
]

Log = Callable[[str], None]


def _matches(source: str, prefix: str) -> bool:
    return source == prefix or source.startswith(prefix + ".")


def apply_caps(pairs: Sequence[LabelledPair], cfg: VerifierTrainConfig) -> list[LabelledPair]:
    """Each capped family of sources at most its cap (a seeded sample), in the original order."""
    keep = set(range(len(pairs)))
    for prefix, cap in cfg.caps:
        rows = [i for i, item in enumerate(pairs) if _matches(item.source, prefix)]
        if len(rows) > cap:
            rng = np.random.default_rng([cfg.seed, int(hashlib.sha256(prefix.encode()).hexdigest()[:8], 16)])
            keep -= set(rows) - {int(r) for r in rng.choice(rows, size=cap, replace=False)}
    return [pairs[i] for i in sorted(keep)]


def apply_repeats(pairs: Sequence[LabelledPair], cfg: VerifierTrainConfig) -> list[LabelledPair]:
    """The pairs with each repeated family's pairs that many times (the copies follow the originals)."""
    out = list(pairs)
    for prefix, times in cfg.repeats:
        extra = [item for item in pairs if _matches(item.source, prefix)]
        out.extend(extra * (times - 1))
    return out


def split_validation(pairs: Sequence[LabelledPair], share: float) -> tuple[list[LabelledPair], list[LabelledPair]]:
    """(train, validation) by group: a group's hash decides its side, so related pairs never straddle it."""
    train: list[LabelledPair] = []
    valid: list[LabelledPair] = []
    for item in pairs:
        bucket = int(hashlib.sha256(item.group.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        (valid if bucket < share else train).append(item)
    return train, valid


@dataclass(frozen=True)
class EncodedPairs:
    """Token ids of labelled pairs, flattened: pair i is ``ids[offsets[i]:offsets[i+1]]``."""

    ids: np.ndarray
    type_ids: np.ndarray
    offsets: np.ndarray
    labels: np.ndarray
    sources: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.labels)

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def rows(self, index: Sequence[int]) -> list[tuple[list[int], list[int]]]:
        return [(self.ids[self.offsets[i]:self.offsets[i + 1]].tolist(),
                 self.type_ids[self.offsets[i]:self.offsets[i + 1]].tolist()) for i in index]

    def sha256(self) -> str:
        digest = hashlib.sha256()
        for array in (self.ids, self.type_ids, self.offsets, self.labels):
            digest.update(np.ascontiguousarray(array).tobytes())
        digest.update("\n".join(self.sources).encode())
        return digest.hexdigest()


def encode_training_pairs(pairs: Sequence[LabelledPair], tokenizer_file: Path, max_tokens: int) -> EncodedPairs:
    """Tokenise every pair once, as the runtime adapter will (``encode_pairs``)."""
    from stages.adapters.onnx_verifier import encode_pairs, load_tokenizer

    tokenizer = load_tokenizer(tokenizer_file, max_tokens)
    ids: list[int] = []
    types: list[int] = []
    offsets = [0]
    for start in range(0, len(pairs), 4096):
        for token_ids, type_ids in encode_pairs(tokenizer, [p.pair for p in pairs[start:start + 4096]]):
            ids.extend(token_ids)
            types.extend(type_ids)
            offsets.append(len(ids))
    return EncodedPairs(ids=np.array(ids, dtype=np.int32), type_ids=np.array(types, dtype=np.int8),
                        offsets=np.array(offsets, dtype=np.int64),
                        labels=np.array([p.label for p in pairs], dtype=np.float32),
                        sources=tuple(p.source for p in pairs))


def batch_order(lengths: np.ndarray, cfg: VerifierTrainConfig, epoch: int) -> list[np.ndarray]:
    """The epoch's batches: a seeded shuffle, then pairs of similar length batched together within windows of
    50 batches (less padding), then the batches shuffled."""
    rng = np.random.default_rng([cfg.seed, epoch])
    order = rng.permutation(len(lengths))
    window = cfg.batch_size * 50
    batches: list[np.ndarray] = []
    for start in range(0, len(order), window):
        part = order[start:start + window]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + cfg.batch_size] for i in range(0, len(part), cfg.batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def scheduled_rows(lengths: np.ndarray, cfg: VerifierTrainConfig) -> np.ndarray:
    """The rows the schedule trains on, in order: every epoch's batches, cut at ``cfg.max_steps``."""
    batches = [b for e in range(cfg.epochs) for b in batch_order(lengths, cfg, e)]
    if cfg.max_steps is not None:
        batches = batches[:cfg.max_steps]
    return np.concatenate(batches) if batches else np.zeros(0, dtype=np.int64)


def _torch_batch(encoded: EncodedPairs, rows: np.ndarray):  # noqa: ANN202
    import torch

    from stages.adapters.onnx_verifier import pad_batch

    arrays = pad_batch(encoded.rows(rows))
    return ({k: torch.from_numpy(v) for k, v in arrays.items()},
            torch.from_numpy(encoded.labels[rows]))


def _load_base(base_dir: Path):  # noqa: ANN202
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    return AutoModelForSequenceClassification.from_pretrained(str(base_dir), num_labels=1)


def _save_checkpoint(path: Path, state: dict) -> None:
    import torch

    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write(path, buffer.getvalue())


def train_checkpoints(
    encoded: EncodedPairs, cfg: VerifierTrainConfig, base_dir: Path, run_dir: Path, log: Log = print,
    stop_after_steps: int | None = None,
) -> Path:
    """Train from the base weights (or resume from ``run_dir/checkpoint.pt``) to the end of the schedule.

    Returns the checkpoint path; the checkpoint's ``done`` is True once every step has run.
    ``stop_after_steps`` ends this call early (a later call resumes), for runs split across sessions.
    """
    import torch

    torch.set_num_threads(cfg.threads)
    checkpoint = run_dir / "checkpoint.pt"
    # What the trained weights depend on: the config less its pacing knobs (threads, checkpoint interval), so a
    # run can resume with other threads, and the encoded pairs.
    run_key = {"config": content_sha256(cfg.model_dump(exclude={"threads", "checkpoint_every"})),
               "pairs": encoded.sha256()}
    epochs = [batch_order(encoded.lengths(), cfg, e) for e in range(cfg.epochs)]
    schedule = [(e, b) for e in range(cfg.epochs) for b in range(len(epochs[e]))]
    total = len(schedule) if cfg.max_steps is None else min(len(schedule), cfg.max_steps)
    warmup = max(1, int(total * cfg.warmup_share))

    torch.manual_seed(cfg.seed)
    model = _load_base(base_dir)
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimiser = torch.optim.AdamW(groups, lr=cfg.learning_rate)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup))))
    step, seconds, seen = 0, 0.0, 0
    if checkpoint.is_file():
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        if state["run_key"] != run_key:
            raise ConfigError(f"{checkpoint} belongs to another run (config or data differ); use a new run folder")
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        step, seconds, seen = state["step"], state["seconds"], state["seen"]
        log(f"resumed at step {step}/{total} ({seconds / 60:.1f} min trained)")
    model.train()
    loss_fn = torch.nn.BCEWithLogitsLoss()
    window_loss, window_n, started = 0.0, 0, time.perf_counter()
    ran = 0
    while step < total:
        epoch, index = schedule[step]
        inputs, labels = _torch_batch(encoded, epochs[epoch][index])
        logits = model(**inputs).logits.squeeze(-1)
        loss = loss_fn(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        scheduler.step()
        optimiser.zero_grad(set_to_none=True)
        step += 1
        ran += 1
        seen += len(labels)
        window_loss += float(loss) * len(labels)
        window_n += len(labels)
        if step % 50 == 0 or step == total:
            now = time.perf_counter()
            log(f"step {step}/{total} loss {window_loss / window_n:.4f} lr {scheduler.get_last_lr()[0]:.2e} "
                f"{(now - started) / window_n * 1000:.0f} ms/pair")
            seconds += now - started
            window_loss, window_n, started = 0.0, 0, now
        if step % cfg.checkpoint_every == 0 or step == total or (stop_after_steps and ran >= stop_after_steps):
            seconds += time.perf_counter() - started
            started = time.perf_counter()
            _save_checkpoint(checkpoint, {
                "run_key": run_key, "model": model.state_dict(), "optimiser": optimiser.state_dict(),
                "scheduler": scheduler.state_dict(), "rng": torch.get_rng_state(), "step": step,
                "seconds": seconds, "seen": seen, "done": step == total, "total": total,
            })
            if stop_after_steps and ran >= stop_after_steps:
                break
    return checkpoint


def checkpoint_model(checkpoint: Path, base_dir: Path):  # noqa: ANN201
    """The model of a checkpoint, in eval mode, and the checkpoint's bookkeeping."""
    import torch

    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    model = _load_base(base_dir)
    model.load_state_dict(state["model"])
    model.eval()
    return model, {k: state[k] for k in ("step", "total", "seconds", "seen", "done")}


def evaluate_checkpoint(model, encoded: EncodedPairs, batch_size: int = 64) -> np.ndarray:  # noqa: ANN001
    """Probabilities of the model for every encoded pair (torch, for figures before export)."""
    import torch

    order = np.argsort(encoded.lengths(), kind="stable")
    probs = np.zeros(len(encoded), dtype=np.float64)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            inputs, _ = _torch_batch(encoded, rows)
            probs[rows] = torch.sigmoid(model(**inputs).logits.squeeze(-1)).double().numpy()
    return probs


def export_onnx(model, out_file: Path, work_dir: Path) -> None:  # noqa: ANN001
    """The model as an int8 (dynamically quantised) ONNX graph at ``out_file``, written atomically."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    work_dir.mkdir(parents=True, exist_ok=True)
    fp32 = work_dir / "verifier.fp32.onnx"
    int8 = work_dir / "verifier.int8.onnx"
    sample = torch.ones((1, 8), dtype=torch.int64)
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "token_type_ids": {0: "batch", 1: "tokens"}, "logits": {0: "batch"}}
    with torch.inference_mode():
        torch.onnx.export(model, (sample, sample, torch.zeros_like(sample)), str(fp32),
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    atomic_write(out_file, int8.read_bytes())
    shutil.rmtree(work_dir, ignore_errors=True)


def source_counts(pairs: Sequence[LabelledPair]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter(p.source for p in pairs).items()))
