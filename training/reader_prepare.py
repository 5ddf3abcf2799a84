"""Prepare the reader's training: the hand-written set read, checked, cleaned of eval items and split, and the
bundle the trainer reads written. ``python -m training.reader_prepare OUT`` (the shared data from
``CITEBOUND_SHARED_DATA`` or ``../shared/data``).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

from training.handwritten import check_gold, drop_eval_items, eval_questions, read_slices, split
from training.reader_bundle import CODE_SOURCES, PARAMS, read_code_sections, write_bundle

__all__ = ["ROOT", "HANDWRITTEN", "DEV_SHARE", "UNSEEN_CODES", "prepare", "shared_data"]

ROOT = Path(__file__).resolve().parent.parent
HANDWRITTEN = ROOT / "models" / "reader" / "handwritten"
DEV_SHARE = 0.2
# Whole Acts never trained on: the unseen-document dev split (what a user ingesting a new Act sees).
UNSEEN_CODES = ("Hindu Marriage Act", "Dowry Prohibition Act")


def shared_data() -> Path:
    return Path(os.environ.get("CITEBOUND_SHARED_DATA") or ROOT.parent / "shared" / "data")


def prepare(out: Path, data_root: Path | None = None, folder: Path = HANDWRITTEN) -> dict:
    """Read, check, clean, split and bundle; returns the summary the set's card is made from."""
    from stages.adapters.minilm import model_dir

    data_root = data_root or shared_data()
    questions, problems = read_slices(folder)
    codes = sorted({q.code for q in questions})
    unknown = [c for c in codes if c not in CODE_SOURCES]
    sections = read_code_sections(data_root, [c for c in codes if c in CODE_SOURCES])
    checked, dropped = check_gold(questions, {c: {s for s, _, _ in rows} for c, rows in sections.items()})
    clean, dropped_eval = drop_eval_items(checked, eval_questions(ROOT))
    dropped.update(dropped_eval)
    parts = split(clean, seed=int(PARAMS["seed"]), dev_share=DEV_SHARE, unseen_codes=UNSEEN_CODES)
    files = write_bundle(out, parts, sections, model_dir())
    return {
        "problems": problems,
        "unknown_codes": unknown,
        "questions_read": len(questions),
        "dropped": dict(dropped),
        "split_counts": {k: len(v) for k, v in parts.items()},
        "by_code": dict(Counter(q.code for q in clean)),
        "by_kind": dict(Counter(q.kind for q in clean)),
        "sections_covered": {c: len({q.section or q.sounds_like for q in clean if q.code == c}) for c in codes},
        "bundle_files": files,
    }


if __name__ == "__main__":
    summary = prepare(Path(sys.argv[1]))
    print(json.dumps({k: v for k, v in summary.items() if k != "problems"}, indent=1))
    for line in summary["problems"][:20]:
        print("problem:", line)
