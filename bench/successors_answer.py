"""Answer latency with successors on and off (issue 38): p50/p95 of answering on the IPC + BNS store, one run.

The store holds the whole IPC (civictech JSON) and the BNS 2023 PDF, ingested with the real MiniLM, and the IPC ->
BNS map built from them (``--store DIR`` reuses such a store, else one is built in a temporary folder: minutes,
and it needs Prefect for ingestion). The store is copied twice, one copy per arm, so that neither arm is served
the other's cached retrieval; each question is asked once per arm, in process (``answer_question``, the HTTP API's
path), arms interleaved question by question and their order alternated, so a load on the machine falls on both
alike. Every request is made unique with trailing white space, so no stage is a cache hit. ``on`` is the default
policy; ``off`` sets ``name_successors=false`` (the chain as it was before successors). Questions: the IPC dev
questions of ``bench/data/ipc_questions.jsonl`` (``evaluation.corpora.ipc_queries("dev")``), then the issue's.

Usage: nice .venv/bin/python bench/successors_answer.py [--store DIR] [--questions 40] [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ISSUE_QUESTIONS = ("What is the punishment for cheating under section 420?", "What is section 302?",
                   "Which section of the BNS replaced section 379 of the IPC?",
                   "What is the punishment for theft under the Bharatiya Nyaya Sanhita?")


def _unique(question: str, n: int) -> str:
    return question + " " + format(n, "b").replace("0", " ").replace("1", "\t")


def _build(root: Path, shared: Path) -> None:
    from flows.ingest_flow import ingest_flow
    from flows.provisions_flow import build_provision_map

    os.environ.setdefault("CITEBOUND_PREFECT", "ephemeral")
    for path, code in ((shared / "indian-acts-json" / "ipc.json", "IPC"),
                       (shared / "statute-pdfs" / "Bhartiya_Nyay_Sanhita_BNS.pdf", "BNS")):
        report = ingest_flow(paths=[str(path)], doc_code=code, store=str(root))
        if any(f.status == "error" for f in report.files):
            raise SystemExit(f"ingesting {path} failed: {report.files}")
    build_provision_map(str(root), "IPC", "BNS")


def _stats(ms: list[float]) -> dict[str, float]:
    q = statistics.quantiles(ms, n=20)
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 1), "p95_ms": round(q[18], 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", help="an IPC + BNS store with its IPC -> BNS map (default: build one)")
    ap.add_argument("--questions", type=int, default=40, help="IPC dev questions (the issue's four are added)")
    ap.add_argument("--shared", default=os.environ.get("CITEBOUND_SHARED_DATA", str(ROOT.parent / "shared" / "data")))
    args = ap.parse_args()

    from contracts import ArtifactStore
    from evaluation.corpora import ipc_queries
    from flows.answer_flow import answer_question

    questions = [q for _, q, _ in ipc_queries("dev")][: args.questions] + list(ISSUE_QUESTIONS)
    salt = uuid.uuid4().int % 4096
    with tempfile.TemporaryDirectory(prefix="citebound-successors-bench-") as tmp:
        source = Path(args.store) if args.store else Path(tmp) / "built"
        if not args.store:
            _build(source, Path(args.shared))
        if ArtifactStore(source).get_pointer("provisions/IPC-BNS") is None:
            raise SystemExit(f"{source} holds no IPC -> BNS map: run citebound provisions map --from IPC --to BNS")
        stores = {arm: Path(tmp) / arm for arm in ("on", "off")}
        for copy in stores.values():
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("runs", "*.lock"))
        overrides = {"on": None, "off": {"name_successors": "false"}}
        for arm, store in stores.items():  # warm up: models and each copy's index loaded, not counted
            answer_question(_unique("What is theft?", salt), store=str(store), overrides=overrides[arm])
        ms: dict[str, list[float]] = {"on": [], "off": []}
        named = {"on": 0, "off": 0}
        successor_step_ms: list[float] = []
        load = os.getloadavg()
        for k, question in enumerate(questions):
            for arm in (("on", "off") if k % 2 == 0 else ("off", "on")):
                started = time.perf_counter()
                answer = answer_question(_unique(question, salt + k + 1), store=str(stores[arm]),
                                         overrides=overrides[arm])
                ms[arm].append((time.perf_counter() - started) * 1000)
                named[arm] += any(c.successors for c in answer.citations)
                if arm == "on" and answer.run_id:
                    run = ArtifactStore(stores[arm]).get_run(answer.run_id)
                    successor_step_ms += [s.seconds * 1000 for s in run.steps if s.stage == "successors"]
        out = {"questions": len(questions), "cpus": os.cpu_count(), "load_avg_at_start": load,
               "on": {**_stats(ms["on"]), "answers_naming_a_successor": named["on"]},
               "off": {**_stats(ms["off"]), "answers_naming_a_successor": named["off"]},
               "p50_ratio_on_off": round(statistics.median(ms["on"]) / statistics.median(ms["off"]), 3),
               "successors_step": {"runs": len(successor_step_ms),
                                   "p50_ms": round(statistics.median(successor_step_ms), 1) if successor_step_ms else None}}
    print(f"{'arm':6s} {'n':>4s} {'p50 ms':>9s} {'p95 ms':>9s} {'named':>6s}")
    for arm in ("on", "off"):
        row = out[arm]
        print(f"{arm:6s} {row['n']:4d} {row['p50_ms']:9.1f} {row['p95_ms']:9.1f} {row['answers_naming_a_successor']:6d}")
    print(f"p50 on/off: {out['p50_ratio_on_off']:.3f}; successors step p50 {out['successors_step']['p50_ms']} ms "
          f"over {out['successors_step']['runs']} runs")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
