"""What a user gets for each IPC question: a right answer, a wrong answer, or a refusal (end to end, no Prefect).

Runs the answer stages exactly as ``flows.answer_flow`` chains them (retrieve -> context pack -> prechecks
-> generate -> validate) with the default extractive answerer and the default ``GenerationPolicy``, over the
seven acts of ``indian-acts-json`` (the index of ``bench/retrieval_eval.py``), for every natural-language
question set of ``bench/data/ipc_questions.jsonl``, the NCERT textbook questions (over the real chapter PDF)
and off-topic SQuAD 2.0 questions; ``--thresholds`` repeats it for several ``min_confidence`` values. Each answer falls
in one of four bins:

* ``right``   success, and a citation names the gold IPC section;
* ``wrong``   success, and no citation names it: a grounded answer to a question it was not asked (the
              outcome the grounding contract exists to prevent; the citations let a reader see it);
* ``refused`` the refusal sentence, with its reason code (counted per code below the table);
* ``error``   anything else (should be 0).

A fifth column, ``listed``, counts the wrong answers whose "also retrieved" list (``Answer.related``, shown
under the sources) names the gold section: misleading if read alone, but the right provision is on the page.

Retrieval recall (``bench/retrieval_eval.py``) says whether the right section was found; this says whether
the user was told something true, told nothing, or misled.

Usage: .venv/bin/python bench/answer_eval.py [--negatives N] [--thresholds 0.3,0.4,0.5,0.6]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.corpora import (  # noqa: E402
    MemoEmbedder,
    answer_with_pack,
    act_chunks,
    build_index,
    ingested_chunks,
    ipc_queries,
    ncert_queries,
    squad_questions,
)

from contracts import Answer, GenerationPolicy, RetrieveConfig  # noqa: E402
from evaluation.splits import IPC_BENCH_TAGS, IPC_JUDGE  # noqa: E402
from evaluation.suites.questions import UserQuestion, outcome_of  # noqa: E402
from stages.adapters.extractive_llm import ExtractiveLLM  # noqa: E402

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()
CACHE = Path(tempfile.gettempdir()) / "citebound-bench-cache"
# The lay-worded IPC sets run by default (written after the dev tuning; bench/retrieval_eval.py says what each
# was used for) and the held-out judge, run only with --judge.
FRESH_SPLITS = {tag: name for tag, name in IPC_BENCH_TAGS.items() if name not in IPC_JUDGE}
JUDGE_SPLITS = {tag: name for tag, name in IPC_BENCH_TAGS.items() if name in IPC_JUDGE}


def answer(question: str, index, embedder, cfg: RetrieveConfig, policy: GenerationPolicy, llm) -> Answer:  # noqa: ANN001
    return answer_with_pack(question, index, embedder, cfg, policy, llm)[0]


def _sections(citations) -> set[str]:  # noqa: ANN001
    # Gold ids are "<doc code>_<section>" ("IPC_379", "jemh105_5.2"); a citation's doc code is its id's head.
    return {f"{c.source_id.split('_')[0]}_{c.section_id}" for c in citations}


def outcome(ans: Answer, gold: set[str]) -> str:
    """right / wrong / refused / error, by the questions suite's own rule (one implementation): an off-topic
    question (no gold) that is answered at all is "wrong"."""
    doc_codes = {c.source_id: c.source_id.split("_")[0] for c in ans.citations}
    kind = outcome_of(UserQuestion(line=0, qid="", question=ans.query, expected=tuple(sorted(gold))), ans,
                      doc_codes).kind
    return "wrong" if kind == "wrong provision" else kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--negatives", type=int, default=100, help="off-topic SQuAD questions")
    parser.add_argument("--thresholds", default="",
                        help="comma-separated min_confidence values to compare (e.g. 0.3,0.4,0.5,0.6); "
                             "default: the policy's own")
    parser.add_argument("--sets", default="",
                        help="comma-separated set names to run (dev, held, held2..held8, NCERT, off-topic); default all")
    parser.add_argument("--show", action="store_true", help="print each wrong or refused question (not for --judge sets "
                        "while tuning)")
    parser.add_argument("--rerank", action="store_true", help="RetrieveConfig(rerank=True): the provision rerank")
    parser.add_argument("--judge", action="store_true",
                        help="also run the held-out judge set(s) (held9): only once the code is frozen")
    args = parser.parse_args()

    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    embedder = MemoEmbedder(SentenceTransformersEmbedder())
    embedder.inner.warm_up()
    index = build_index(act_chunks(SHARED), embedder.inner, CACHE)
    ncert_index = build_index(ingested_chunks({SHARED / "ncert-textbook-pdfs" / "jemh105.pdf": None}), embedder.inner,
                              CACHE)
    cfg, llm = RetrieveConfig(rerank=args.rerank), ExtractiveLLM()
    sets = {"dev": (index, [(q, g) for qid, q, g in ipc_queries("dev") if not qid.startswith("ipc-r")]),
            "held": (index, [(q, g) for _, q, g in ipc_queries("heldout")])}
    sets |= {tag: (index, [(q, g) for _, q, g in ipc_queries(split)]) for tag, split in FRESH_SPLITS.items()}
    sets["NCERT"] = (ncert_index, [(q, g) for _, q, g in ncert_queries()])
    sets["off-topic"] = (index, [(q, set()) for q in squad_questions(SHARED, args.negatives)])
    if args.sets:
        wanted = {name.strip() for name in args.sets.split(",") if name.strip()}
        sets = {name: value for name, value in sets.items() if name in wanted}
    if args.judge:
        sets |= {tag: (index, [(q, g) for _, q, g in ipc_queries(split)]) for tag, split in JUDGE_SPLITS.items()}
    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()] or [GenerationPolicy().min_confidence]

    started = time.perf_counter()
    for threshold in thresholds:
        policy = GenerationPolicy(min_confidence=threshold)
        print(f"\nmin_confidence = {threshold}")
        print(f"{'set':<11}{'n':>5}{'right':>9}{'wrong':>9}{'refused':>9}{'error':>8}{'listed':>8}{'several':>9}"
              f"{'precision':>11}   refusal reasons")
        for name, (set_index, questions) in sets.items():
            bins: collections.Counter[str] = collections.Counter()
            reasons: collections.Counter[str] = collections.Counter()
            for question, gold in questions:
                ans = answer(question, set_index, embedder, cfg, policy, llm)
                kind = outcome(ans, gold)
                bins[kind] += 1
                if kind == "wrong" and _sections(ans.related) & gold:
                    bins["listed"] += 1
                if kind == "refused":
                    reasons[ans.reason_code or "?"] += 1
                if kind == "right" and len(_sections(ans.citations)) > 1:
                    bins["several"] += 1
                if args.show and kind != "right" and gold:
                    print(f"    {kind:<8} {question!r} want {sorted(gold)} cited {sorted(_sections(ans.citations))} "
                          f"conf {ans.confidence:.2f} {ans.reason_code or ''}")
            n = len(questions)
            print(f"{name:<11}{n:>5}" + "".join(f"{bins[k] / n:>{w}.1%}" for k, w in
                                               (("right", 9), ("wrong", 9), ("refused", 9), ("error", 8),
                                                ("listed", 8), ("several", 9)))
                  + (f"{bins['right'] / answered:>11.1%}" if (answered := bins["right"] + bins["wrong"]) else f"{'-':>11}")
                  + "   " + ", ".join(f"{code} {count}" for code, count in reasons.most_common()))
    print(f"\n{len(thresholds)} threshold(s) in {time.perf_counter() - started:.1f} s; "
          "off-topic 'wrong' = answered at all; 'listed' = wrong, but the gold section is among the answer's "
          "'also retrieved' provisions.")


if __name__ == "__main__":
    main()
