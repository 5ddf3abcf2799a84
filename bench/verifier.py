"""Verifier time per answer: how much of an answer the trained verifier costs, against the same run's raw
library speed.

    .venv/bin/python bench/verifier.py [--questions 60] [--threads 1]

Answers the IPC question set (``bench/data/ipc_questions.jsonl``, the dev questions first) over the 575 IPC
sections (``indian-acts-json``, one chunk per section, the eval's statute corpus) through the answer stages
in process (``evaluation.corpora.answer_with_pack``: retrieve, context, answerability, precheck, generate,
validate), with the shipped verifier wrapped so every ``score`` call is timed. Reported per answer: verifier
milliseconds (p50, p95), pairs scored, and the share of the whole answer's time. The baseline in the same
run is onnxruntime alone on the same pairs, pre-tokenised (``session.run`` only): the verifier's overhead over
the raw library is tokenisation, batching and the sigmoid.

Target (issue 24): verifier time per answer p50 <= 150 ms on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from contracts import GenerationPolicy, RetrieveConfig  # noqa: E402
from contracts.verifier import VerifierPair  # noqa: E402

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()


class TimedVerifier:
    """The shipped verifier, every ``score`` call timed and its pairs kept."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.seconds = 0.0
        self.pairs: list[VerifierPair] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def score(self, pairs):  # noqa: ANN001, ANN201
        started = time.perf_counter()
        out = self.inner.score(pairs)
        self.seconds += time.perf_counter() - started
        self.pairs.extend(pairs)
        return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (1: a query-serving process)")
    args = parser.parse_args()

    from evaluation.corpora import MemoEmbedder, act_chunks, answer_with_pack, build_index, ipc_queries
    from flows.backends import VERIFIER_DIR, get_embedder, get_llm
    from stages.adapters.onnx_verifier import OnnxVerifier, encode_pairs, pad_batch

    chunks = [c for c in act_chunks(SHARED) if c.provenance.doc_code == "IPC"]
    embedder = MemoEmbedder(get_embedder("minilm"))
    index = build_index(chunks, embedder, Path.home() / ".cache" / "citebound" / "bench")
    verifier = OnnxVerifier(VERIFIER_DIR, threads=args.threads)
    verifier.warm_up()
    llm, cfg, policy = get_llm({"backend": "extractive"}), RetrieveConfig(), GenerationPolicy(verify=True)
    questions = [q for _, q, _ in ipc_queries("dev")][: args.questions]
    per_answer, totals, pairs_per_answer, batches = [], [], [], []
    for question in questions:
        timed = TimedVerifier(verifier)
        started = time.perf_counter()
        answer_with_pack(question, index, embedder, cfg, policy, llm, verifier=timed)
        totals.append(time.perf_counter() - started)
        per_answer.append(timed.seconds)
        pairs_per_answer.append(len(timed.pairs))
        batches.append(timed.pairs)

    # The raw library on the same pairs: pre-tokenised, one session.run per answer's pairs.
    session, tokenizer = verifier._load()  # noqa: SLF001 - the bench measures the adapter against its own session
    # As the adapter runs them (one pair per run, see OnnxVerifier), and batched 16 by length for comparison.
    raw, raw_batched = [], []
    for pairs in batches:
        encoded = encode_pairs(tokenizer, pairs)
        started = time.perf_counter()
        for row in encoded:
            session.run(None, pad_batch([row]))
        raw.append(time.perf_counter() - started)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]))
        feeds = [pad_batch([encoded[i] for i in order[s:s + 16]]) for s in range(0, len(order), 16)]
        started = time.perf_counter()
        for feed in feeds:
            session.run(None, feed)
        raw_batched.append(time.perf_counter() - started)

    ms = [s * 1000 for s in per_answer]
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "load_average": os.getloadavg()[0], "questions": len(questions), "threads": args.threads,
        "verifier_ms_p50": round(_pct(ms, 0.5), 1), "verifier_ms_p95": round(_pct(ms, 0.95), 1),
        "pairs_per_answer_p50": _pct(pairs_per_answer, 0.5),
        "verifier_share_of_answer_p50": round(statistics.median(s / t for s, t in zip(per_answer, totals)), 3),
        "answer_ms_p50": round(_pct([t * 1000 for t in totals], 0.5), 1),
        "raw_onnxruntime_ms_p50": round(_pct([r * 1000 for r in raw], 0.5), 1),
        "raw_onnxruntime_batched16_ms_p50": round(_pct([r * 1000 for r in raw_batched], 0.5), 1),
        "verifier_over_raw_p50": round(statistics.median(s / r for s, r in zip(per_answer, raw) if r > 0), 2),
        "target_ms_p50": 150,
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
