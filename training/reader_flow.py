"""The ``reader-train`` flow: the hand-written set to the shipped reader models, with their cards.

Three tasks, each a step a person can rerun alone:

1. ``prepare``: read, check, clean and split the hand-written set (``training.reader_prepare``), write the bundle
   and the set's card (``models/reader/handwritten/card.json``);
2. ``train``: run ``training/device_reader.py`` on the bundle, here on the CPU at ``nice 19`` (checkpointed per
   phase in the work folder, so a stopped run resumes), or take the outputs of the same script run on an
   accelerator (``trained``: the folder it wrote, checked against this bundle's sha256s);
3. ``export``: the retriever's weights and the reranker (``RERANK_LAYERS``) as the committed models, each with its
   card (data sha256s, base model, steps, device, dev figures).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from prefect import flow, task

from contracts._base import sha256_file
from contracts.handwritten import HandwrittenSetCard, SliceCheck
from contracts.store import atomic_write
from training.reader_prepare import DEV_SHARE, HANDWRITTEN, ROOT, UNSEEN_CODES, prepare

__all__ = ["reader_train", "RERANK_LAYERS", "set_card", "check_outputs", "join_runs"]

RERANK_LAYERS = 3
"""The shipped reranker's depth: 3 layers score 20 candidates in about 100 ms on one core here, 6 layers in about
230 ms (the issue's budget is 150 ms); the 6-layer model's dev figures go in the card for comparison."""
MODELS = ROOT / "models" / "reader"
DEVICE_SCRIPT = ROOT / "training" / "device_reader.py"


def set_card(summary: dict, folder: Path = HANDWRITTEN) -> HandwrittenSetCard:
    """The hand-written set's card from ``prepare``'s summary and the second readers' check files."""
    checks = []
    for path in sorted((folder / "checks").glob("*.json")):
        row = json.loads(path.read_text(encoding="utf-8"))
        checks.append(SliceCheck(slice=row["slice"], checked=row["checked"], agree=row["agree"], fixed=row["fixed"],
                                 dropped=row["dropped"]))
    checked = sum(c.checked for c in checks)
    return HandwrittenSetCard(
        written_by="citebound's authors (the development team's writing sessions), by hand: one writer per slice, "
                   "each provision's or chapter's text in view, following shared/QUESTION_WRITING.md; no local model "
                   "generated, rewrote or filtered a question",
        method="IPC and BNS: 4 lay questions (a situation in everyday words, no section numbers, none of the "
               "section's rare words), 1 law-student question and 1 near miss (gold another section, or none) per "
               "section; other Acts: 1-3 per section; NCERT: 8 questions answered by 1-2 sentences of the chapter's "
               "running text (copied as evidence) and 3 that sound like the chapter but are not answered, per "
               "chapter. A second reader checked a seeded random 10% of every slice against the text (agree / fix / "
               "drop), fixing or dropping in place.",
        sources=tuple(sorted(summary["sources"].items())),
        files=tuple((p.name, sha256_file(p)) for p in sorted(folder.glob("*.jsonl"))),
        questions=sum(summary["by_code"].values()),
        by_code=tuple(sorted(summary["by_code"].items())),
        by_kind=tuple(sorted(summary["by_kind"].items())),
        sections_covered=tuple(sorted(summary["sections_covered"].items())),
        dropped=tuple(sorted(summary["dropped"].items())),
        checks=tuple(checks),
        agreement=round(sum(c.agree for c in checks) / checked, 4) if checked else 0.0,
        split_seed=int(summary["seed"]),
        dev_share=DEV_SHARE,
        unseen_codes=UNSEEN_CODES,
        split_counts=tuple(sorted(summary["split_counts"].items())),
    )


@task(name="reader-prepare")
def prepare_task(bundle: str, data_root: str | None, library: str | None) -> dict:
    summary = prepare(Path(bundle), Path(data_root) if data_root else None,
                      library=Path(library) if library else None)
    card = set_card(summary)
    atomic_write(HANDWRITTEN / "card.json", (card.model_dump_json(indent=1) + "\n").encode())
    summary["card_sha256"] = sha256_file(HANDWRITTEN / "card.json")
    return summary


def check_outputs(trained: Path, bundle_files: dict[str, str]) -> dict:
    """The trainer's metrics, when they were made from exactly this bundle (else ValueError naming the file)."""
    metrics = json.loads((trained / "metrics.json").read_text(encoding="utf-8"))
    for name, sha in bundle_files.items():
        if metrics.get("bundle", {}).get(name) != sha:
            raise ValueError(f"{trained.name}/metrics.json was trained from another {name} than this bundle's")
    return metrics


def join_runs(retriever_run: Path, reranker_run: Path, out: Path) -> dict:
    """One trainer output folder from two accelerator runs: the retriever (and its figures) of the first, the
    rerankers of the second (run on ``reader_bundle.reranker_bundle``: the first's retriever as base weights).
    ``bundle`` stays the first run's (what the set's card vouches for); ``reranker_bundle`` records the second's."""
    import shutil

    first = json.loads((retriever_run / "metrics.json").read_text(encoding="utf-8"))
    second = json.loads((reranker_run / "metrics.json").read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    files = {"retriever": first["files"]["retriever"]}
    for name in first["files"]["retriever"]:
        shutil.copyfile(retriever_run / name, out / name)
    for phase, names in second["files"].items():
        if phase.startswith("reranker_"):
            files[phase] = names
            for name in names:
                shutil.copyfile(reranker_run / name, out / name)
    joined = {k: v for k, v in first.items() if not k.startswith("reranker_")}
    joined |= {k: v for k, v in second.items() if k.startswith("reranker_")}
    joined.update(files=files, params=second["params"], reranker_bundle=second["bundle"],
                  seconds=round(first.get("seconds", 0) + second.get("seconds", 0), 1))
    (out / "metrics.json").write_text(json.dumps(joined, indent=1))
    return joined


@task(name="reader-train")
def train_task(bundle: str, work: str, trained: str | None) -> str:
    if trained:
        return trained
    # The CPU run: low priority, its own process (torch and its threads never enter this one), resumable.
    cmd = ["nice", "-n", "19", sys.executable, str(DEVICE_SCRIPT), bundle, work]
    subprocess.run(cmd, check=True, env={**os.environ, "OMP_NUM_THREADS": "2"})
    return work


@task(name="reader-export")
def export_task(trained: str, summary: dict) -> dict:
    from stages.adapters.minilm import model_dir
    from training.reader_models import write_reranker, write_retriever

    out = Path(trained)
    metrics = check_outputs(out, summary["bundle_files"])
    device = metrics.get("device_name") or metrics.get("device", "?")
    common = dict(model_folder=model_dir(), bundle_files=summary["bundle_files"],
                  question_set_sha256=summary["card_sha256"], trained_on=f"{device}, {metrics.get('seconds')} s")
    params = metrics["params"]

    def figures(prefix: str) -> dict[str, float]:
        return {f"{prefix}_{split}_{k}": v for split in ("dev", "unseen")
                for k, v in metrics.get(f"{prefix}_{split}", {}).items() if k != "n"}

    retriever = write_retriever(out, metrics["files"]["retriever"], MODELS / "retriever", max_tokens=256,
                                params={"run": metrics.get("retriever_run"), "batch": params["retriever_batch"],
                                        "scale": params["scale"], "hard_pool": params["hard_pool"],
                                        "runs": metrics.get("retriever_runs")},
                                steps=int(metrics.get("retriever_steps", 0)),
                                dev={**figures("retriever_base"), **figures("retriever_tuned")}, **common)
    other = [n for n in params["rerank_layers"] if n != RERANK_LAYERS]
    reranker = write_reranker(
        out, metrics["files"][f"reranker_L{RERANK_LAYERS}"], RERANK_LAYERS, MODELS / "reranker",
        max_tokens=int(params["rerank_tokens"]),
        params={k: params[k] for k in params if k.startswith("rerank")},
        steps=int(metrics.get(f"reranker_L{RERANK_LAYERS}_steps", 0)),
        dev={**figures(f"reranker_L{RERANK_LAYERS}"), **{k: v for n in other for k, v in figures(f"reranker_L{n}").items()}},
        notes="Candidates: the fine-tuned retriever's dense top 20; the pool at run time is hybrid retrieval's top 20. "
              "Calibration: Platt scaling fitted on dev by bench/reader_eval.py --calibrate.", **common)
    return {"retriever": retriever.files, "reranker": reranker.files}


@flow(name="reader-train")
def reader_train(bundle: str, work: str, trained: str | None = None, data_root: str | None = None,
                 library: str | None = None) -> dict:
    """Prepare, train (or take an accelerator's outputs) and export the reader's models."""
    summary = prepare_task(bundle, data_root, library)
    out = train_task(bundle, work, trained)
    return {"set": {k: summary[k] for k in ("split_counts", "by_kind", "dropped")},
            "models": export_task(out, summary), "counts": dict(Counter(summary["by_code"]))}
