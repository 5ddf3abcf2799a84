"""HaluEval QA through citebound's validator: is each right answer accepted and each hallucinated one refused?

    .venv/bin/python bench/halueval_eval.py --split dev|held [--show N]

Data: ``$CITEBOUND_SHARED_DATA/halueval-qa/qa_one-turn_data.json`` (500 records, JSON Lines; SOURCE.md). Items
0-249 are the dev half, 250-499 the held-out half (run once, with the code frozen). Each record becomes a
one-chunk ContextPack (``HQA_<n>_0`` holding the record's ``knowledge``; the pack's query is the ``question``)
and both answers are validated against it with the default ``GenerationPolicy``, in two forms:

* **short**: the answer as HaluEval gives it, cited: ``"Delhi [HQA_1_0]."``;
* **sentence**: a full sentence derived mechanically from question + answer: the question with its
  question mark dropped, a colon, the answer: ``"... has a head office in what city: Delhi [HQA_1_0]."``
  (no hand edits; the same rule for right and hallucinated answers). A bare yes/no answer becomes
  ``"No — were Pavel Urysohn and Leonid Levin known for the same type of work [HQA_27_0]."``

"Positive" = hallucinated; a refusal of any kind is a "hallucinated" verdict. The ten-line rule (refuse an
answer having any word found in neither question nor knowledge) is scored beside it on the same items.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contracts.answer import GenerationPolicy  # noqa: E402
from stages.validate import validate_answer_text  # noqa: E402
from tests.packs import make_chunk, make_pack  # noqa: E402

DATA = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data"))
SPLITS = {"dev": range(0, 250), "held": range(250, 500)}
_WORD = re.compile(r"[a-z0-9]+")


def load(split: str) -> list[tuple[int, dict]]:
    rows = [json.loads(line) for line in (DATA / "halueval-qa" / "qa_one-turn_data.json").open() if line.strip()]
    return [(n, rows[n]) for n in SPLITS[split]]


def short_form(answer: str, source_id: str) -> str:
    return f"{answer.strip().rstrip('.')} [{source_id}]."


def sentence_form(question: str, answer: str, source_id: str) -> str:
    asked = question.strip().rstrip("?").strip()
    reply = answer.strip().rstrip(".")
    if reply.lower() in ("yes", "no"):
        return f"{reply.capitalize()} — {asked[:1].lower()}{asked[1:]} [{source_id}]."
    return f"{asked}: {reply} [{source_id}]."


def ten_line_rule(question: str, knowledge: str, answer: str) -> bool:
    """True = refuse: the answer has a word found in neither the question nor the knowledge."""
    known = set(_WORD.findall(question.lower())) | set(_WORD.findall(knowledge.lower()))
    return bool(set(_WORD.findall(answer.lower())) - known)


def scores(verdicts: list[tuple[bool, bool]]) -> tuple[float, float, int, int, int]:
    """(F1 for 'hallucinated', right accepted share, TP, FP, FN) from (is_hallucinated, refused) pairs."""
    tp = sum(h and r for h, r in verdicts)
    fp = sum(not h and r for h, r in verdicts)
    fn = sum(h and not r for h, r in verdicts)
    n_right = sum(not h for h, _ in verdicts)
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return f1, (n_right - fp) / n_right, tp, fp, fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=tuple(SPLITS), required=True)
    parser.add_argument("--show", type=int, default=0, help="print up to N misclassified answers per form")
    args = parser.parse_args()
    policy = GenerationPolicy()
    items = load(args.split)
    results: dict[str, list[tuple[bool, bool]]] = collections.defaultdict(list)
    reasons: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    misses: dict[str, list[str]] = collections.defaultdict(list)
    start = time.perf_counter()
    for n, row in items:
        source_id = f"HQA_{n}_0"
        pack = make_pack(row["question"], [make_chunk(source_id, row["knowledge"])])
        for hallucinated, answer in ((False, row["right_answer"]), (True, row["hallucinated_answer"])):
            for form, text in (("short", short_form(answer, source_id)),
                               ("sentence", sentence_form(row["question"], answer, source_id))):
                verdict = validate_answer_text(text, pack, policy)
                refused = verdict.status != "success"
                results[form].append((hallucinated, refused))
                reasons[f"{form} {'hallucinated' if hallucinated else 'right'}"][verdict.reason_code or "accepted"] += 1
                if refused != hallucinated:
                    misses[form].append(f"[{n}] {'MISSED' if hallucinated else 'REFUSED'} {text!r} "
                                        f"({verdict.reason_code}: {(verdict.refusal_reason or '')[:120]})")
            results["ten-line rule"].append((hallucinated, ten_line_rule(row["question"], row["knowledge"], answer)))
    elapsed = time.perf_counter() - start
    print(f"HaluEval QA, split {args.split} (items {SPLITS[args.split].start}-{SPLITS[args.split].stop - 1}): "
          f"{len(items)} right + {len(items)} hallucinated answers per form, default GenerationPolicy\n")
    print(f"{'method':28} {'F1 halluc.':>10} {'right acc.':>10} {'TP':>5} {'FP':>5} {'FN':>5}")
    for name in ("short", "sentence", "ten-line rule"):
        f1, kept, tp, fp, fn = scores(results[name])
        label = f"citebound validate ({name})" if name != "ten-line rule" else "ten-line rule (short)"
        print(f"{label:28} {f1:10.3f} {kept:10.1%} {tp:5d} {fp:5d} {fn:5d}")
    print(f"\n({2 * 2 * len(items)} validations in {elapsed:.1f} s)\n")
    for key, counter in sorted(reasons.items()):
        print(f"{key:24} " + ", ".join(f"{k} {v}" for k, v in counter.most_common()))
    for form, lines in misses.items():
        for line in lines[: args.show]:
            print(f"{form}: {line}")


if __name__ == "__main__":
    main()
