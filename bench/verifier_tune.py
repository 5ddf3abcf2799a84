"""How the verifier's thresholds were chosen: a grid over ``min_answerability`` and ``min_support`` on dev halves
only (the record of the choice; nothing here reads a held half).

    .venv/bin/python bench/verifier_tune.py [--verifier DIR] [--answerability 0.3,0.4,...] [--support 0.2,...]

Dev data, as the eval suites split it (``evaluation.splits``): SQuAD 2.0's dev half (every article the held
split's manifest does not record; the shipped thresholds were chosen when the dev half was the even-position
titles), 160 answerable + 160 unanswerable; HaluEval QA records 0-249 (both answers, both forms); the IPC dev
questions over the seven acts, the NCERT questions and 100 off-topic SQuAD questions (no held set of the
provisions suite).
Retrieval, answerability and support scores are computed once per text (memoised) and the grid re-runs only
the cheap stages. For each (answerability, support) pair it prints the figures the acceptance asks for: SQuAD
unanswerable refused and answerable gold-in-answer, HaluEval F1 and right answers kept (both forms), IPC dev
right and answered precision, NCERT right, off-topic answered.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()
CACHE = Path.home() / ".cache" / "citebound" / "tune"


class MemoVerifier:
    """Scores each distinct pair once, whatever the grid asks again."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.memo: dict[tuple[str, str, str, str], float] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def score(self, pairs):  # noqa: ANN001, ANN201
        keys = [(p.task, p.text, p.passage, p.question) for p in pairs]
        todo = [p for p, k in zip(pairs, keys, strict=True) if k not in self.memo]
        for pair, value in zip(todo, self.inner.score(todo) if todo else (), strict=True):
            self.memo[(pair.task, pair.text, pair.passage, pair.question)] = value
        return tuple(self.memo[k] for k in keys)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verifier", default=None, help="model folder (default the shipped one)")
    parser.add_argument("--answerability", default="0.3,0.4,0.5,0.6,0.7")
    parser.add_argument("--support", default="0.1,0.2,0.3,0.4,0.5")
    parser.add_argument("--baseline", action="store_true", help="first a row with the verifier off (word checks alone)")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: squad,halueval,ipc")
    args = parser.parse_args()

    from contracts import GenerationPolicy, RetrieveConfig
    from evaluation.corpora import (
        MemoEmbedder,
        act_chunks,
        answer_with_pack,
        build_index,
        ingested_chunks,
        ipc_queries,
        ncert_queries,
        squad_questions,
    )
    from evaluation.metrics import detection_counts
    from evaluation.packs import make_chunk, make_pack
    from evaluation.suites.hallucination import halueval_items, sentence_form, short_form
    from evaluation.suites.provisions import classify
    from evaluation.splits import squad_split
    from evaluation.suites.refusal import has_gold, load_articles, pick_questions, write_articles
    from flows.backends import VERIFIER_DIR, get_embedder, get_llm
    from stages.adapters.onnx_verifier import OnnxVerifier
    from stages.grounding.validate import validate_answer_text

    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    verifier = MemoVerifier(OnnxVerifier(Path(args.verifier) if args.verifier else VERIFIER_DIR))
    inner = get_embedder("minilm")
    embedder = MemoEmbedder(inner)
    llm, cfg = get_llm({"backend": "extractive"}), RetrieveConfig()
    grid = [(a, s) for a in map(float, args.answerability.split(",")) for s in map(float, args.support.split(","))]
    if args.baseline:
        grid.insert(0, (-1.0, -1.0))

    squad = []
    if "squad" not in skip:
        articles = load_articles(SHARED)
        split = squad_split(articles)
        dev_titles = split.titles("dev")
        # Both halves' articles are indexed, as the refusal suite does; only dev questions are asked.
        indexed = sorted(dev_titles + split.titles("held"))
        squad_index = build_index(ingested_chunks(write_articles(articles, indexed, CACHE / "squad-articles")),
                                  inner, CACHE)
        squad = pick_questions(articles, dev_titles, 160)
    halu = [] if "halueval" in skip else halueval_items(SHARED, "dev")
    ipc = []
    if "ipc" not in skip:
        acts_index = build_index(act_chunks(SHARED), inner, CACHE)
        ncert_index = build_index(ingested_chunks({SHARED / "ncert-textbook-pdfs" / "jemh105.pdf": None}), inner, CACHE)
        ipc = [("dev", acts_index, q, g) for qid, q, g in ipc_queries("dev") if not qid.startswith("ipc-r")]
        ipc += [("ncert", ncert_index, q, g) for _, q, g in ncert_queries()]
        ipc += [("off", acts_index, q, set()) for q in squad_questions(SHARED, 100)]

    print(f"{'ans':>5}{'sup':>5} | {'sq unans ref':>12}{'sq gold':>9} | {'halu F1 sh':>10}{'kept':>6}{'F1 se':>7}"
          f"{'kept':>6} | {'ipc right':>9}{'prec':>6}{'ncert':>7}{'off ans':>8}")
    for min_answerability, min_support in grid:
        started = time.perf_counter()
        # A negative answerability asks for the word checks alone (verify off): the baseline row.
        policy = GenerationPolicy(verify=False) if min_answerability < 0 else \
            GenerationPolicy(verify=True, min_answerability=min_answerability, min_support=min_support)
        row = f"{min_answerability:>5.2f}{min_support:>5.2f} | "
        if squad:
            refused = answered_gold = n_unans = n_ans = 0
            for q in squad:
                answer, _ = answer_with_pack(q.question, squad_index, embedder, cfg, policy, llm, verifier=verifier)
                if q.impossible:
                    n_unans += 1
                    refused += answer.status != "success"
                else:
                    n_ans += 1
                    answered_gold += answer.status == "success" and has_gold(answer.answer, q.gold)
            row += f"{refused / n_unans:>12.3f}{answered_gold / n_ans:>9.3f} | "
        if halu:
            for form in ("short", "sentence"):
                truth, flagged = [], []
                for n, rec in halu:
                    pack = make_pack(rec["question"], [make_chunk(f"HQA_{n}_0", rec["knowledge"])])
                    for bad, text in ((False, rec["right_answer"]), (True, rec["hallucinated_answer"])):
                        cited = short_form(text, f"HQA_{n}_0") if form == "short" else \
                            sentence_form(rec["question"], text, f"HQA_{n}_0")
                        truth.append(bad)
                        flagged.append(validate_answer_text(cited, pack, policy, verifier=verifier).status != "success")
                c = detection_counts(truth, flagged)
                row += f"{c.f1:>{10 if form == 'short' else 7}.3f}{c.tn / (c.tn + c.fp):>6.3f}"
            row += " | "
        if ipc:
            kinds: dict[str, list[str]] = {"dev": [], "ncert": [], "off": []}
            for part, index, q, gold in ipc:
                answer, _ = answer_with_pack(q, index, embedder, cfg, policy, llm, verifier=verifier)
                kinds[part].append(classify(answer, gold))
            dev = kinds["dev"]
            given = [k for k in dev if k in ("right", "wrong provision")]
            row += (f"{dev.count('right') / len(dev):>9.3f}{(given.count('right') / len(given)) if given else 0:>6.3f}"
                    f"{kinds['ncert'].count('right') / len(kinds['ncert']):>7.3f}"
                    f"{sum(k != 'refused' for k in kinds['off']) / len(kinds['off']):>8.3f}")
        print(row + f"   ({time.perf_counter() - started:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
