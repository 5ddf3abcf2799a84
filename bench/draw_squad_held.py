"""How the SQuAD 2.0 held half was drawn (once, 2026-11-25; the record of the draw, rerun only as a check).

    .venv/bin/python bench/draw_squad_held.py [--at 84ec45a] [--write]

Until then the held half was the odd positions of the sorted titles; its figures were reported and two of its
questions were the examples of ``stages/grounding/question_alignment.py``. The new held half is every article of
``squad2-dev-subset`` that

1. was never in that held half (so: the old dev half), and
2. leaves no trace in the repository at commit ``--at``: none of its question ids, none of its question texts and
   none of its paragraphs (the first 200 characters, case and punctuation folded) occurs in a tracked file.

All such articles are taken (no sampling: two qualify). Questions of theirs that
``evaluation.corpora.squad_questions`` returns for the sizes the suites and benches use (20, 100, 150) were asked
as off-topic statute questions before: they are listed as ``excluded_ids`` and never scored as held items.
Prints titles and counts only; ``--write`` writes ``evaluation/data/squad_held_split.json``.

Without ``--at``, the draw is run again at the commit the manifest records (``drawn_at_commit``), which is how
``make bench`` runs it: a check that the recorded draw still comes out the same (exit 1 if not). A clone without
that commit (a shallow one) or without the shared data skips with one line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()
OFF_TOPIC_SIZES = (20, 100, 150)
BINARY = (".onnx", ".npy", ".pdf", ".png")


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def tracked_text(commit: str) -> str:
    """Every tracked text file at ``commit``, concatenated, lower case."""
    names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", commit], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    parts = []
    for name in names:
        if name.endswith(BINARY):
            continue
        blob = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{name}"], capture_output=True).stdout
        parts.append(blob.decode("utf-8", errors="ignore"))
    return "\n".join(parts).lower()


def main() -> int:
    from evaluation.corpora import squad_questions
    from evaluation.splits import SQUAD_MANIFEST, question_digest

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--at", help="the commit whose tracked files must not quote a held item "
                                     "(default: the one evaluation/data/squad_held_split.json records)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    recorded = args.at is None
    if recorded:
        args.at = json.loads(SQUAD_MANIFEST.read_text(encoding="utf-8"))["drawn_at_commit"]
    data_file = SHARED / "squad2-dev-subset" / "dev-v2.0.json"
    if not data_file.is_file():
        print(f"skipped: {data_file} not found (set CITEBOUND_SHARED_DATA)")
        return 0
    known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{args.at}^{{commit}}"], capture_output=True)
    if known.returncode != 0:
        if not recorded:
            print(f"error: commit {args.at} is not in this clone", file=sys.stderr)
            return 2
        print(f"skipped: commit {args.at} is not in this clone (a shallow clone lacks it)")
        return 0
    articles = json.loads(data_file.read_text(encoding="utf-8"))["data"]
    titles = sorted(a["title"] for a in articles)
    old_held = titles[1::2]
    raw = tracked_text(args.at)
    folded = f" {_fold(raw)} "
    eligible = []
    for article in sorted(articles, key=lambda a: a["title"]):
        qas = [qa for p in article["paragraphs"] for qa in p["qas"]]
        hits = (sum(qa["id"].lower() in raw for qa in qas), sum(f" {_fold(qa['question'])} " in folded for qa in qas),
                sum(_fold(p["context"])[:200] in folded for p in article["paragraphs"]))
        ok = article["title"] not in old_held and not any(hits)
        print(f"{article['title']:<32} old {'held' if article['title'] in old_held else 'dev '}  "
              f"id/question/paragraph hits {hits}  {'ELIGIBLE' if ok else ''}")
        if ok:
            eligible.append(article)
    off_topic = {q for n in OFF_TOPIC_SIZES for q in squad_questions(SHARED, n)}
    held = []
    excluded: list[str] = []
    for article in eligible:
        qas = [qa for p in article["paragraphs"] for qa in p["qas"]]
        gone = [qa["id"] for qa in qas if qa["question"] in off_topic]
        excluded += gone
        held.append({"title": article["title"], "questions": len(qas),
                     "answerable": sum(not qa["is_impossible"] for qa in qas),
                     "unanswerable": sum(bool(qa["is_impossible"]) for qa in qas),
                     "sha256": question_digest(article)})
        print(f"held: {article['title']}: {len(qas)} questions, {len(gone)} asked before as off-topic (excluded)")
    manifest = {
        "kind": "squad_held_split.v1",
        "drawn": "2026-11-25",
        "drawn_at_commit": args.at,
        "data_file": "squad2-dev-subset/dev-v2.0.json",
        "rule": __doc__.split("\n\n", 2)[2].split("Prints titles")[0].strip(),
        "seed": None,
        "exposure": "both held articles were in the old dev half: aggregate figures over its 8 articles chose "
                    "settings before (the alignment window, the verifier thresholds); no item of theirs was quoted "
                    "and nothing is tuned on them from now on",
        "held": held,
        "excluded_ids": sorted(excluded),
        "retired_held": old_held,
    }
    if recorded and not args.write:
        stored = json.loads(SQUAD_MANIFEST.read_text(encoding="utf-8"))
        same = stored["held"] == manifest["held"] and stored["excluded_ids"] == manifest["excluded_ids"]
        print(f"the recorded split ({SQUAD_MANIFEST.relative_to(ROOT)}): {'the same' if same else 'DIFFERENT'}")
        return 0 if same else 1
    if args.write:
        SQUAD_MANIFEST.parent.mkdir(parents=True, exist_ok=True)
        SQUAD_MANIFEST.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {SQUAD_MANIFEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
