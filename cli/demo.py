"""``citebound demo``: ingest the bundled sample corpus and ask its three questions (two answered, one refused)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from cli.ask import format_answer
from cli.common import add_common, prepare
from cli.ingest import print_ingest

__all__ = ["add_parsers", "cmd_demo"]


def _sample_corpus() -> tuple[list[tuple[Path, str]], list[str]]:
    import samples

    base = Path(samples.__file__).resolve().parent
    corpus = base / "corpus"
    files = [
        (corpus / "model_penal_code.pdf", "IPC"),
        (corpus / "wages_act_scanned.pdf", "WagesAct"),
    ]
    md = sorted(corpus.glob("*.md")) or sorted((base / "sources").glob("ncert*.md"))
    files += [(p, "NCERT") for p in md[:1]]
    questions = [q.strip() for q in (base / "demo_questions.txt").read_text().splitlines() if q.strip()]
    return files, questions


def cmd_demo(args: argparse.Namespace) -> int:
    root = prepare(args)
    from flows.answer_flow import answer_flow
    from flows.ingest_flow import ingest_flow
    from flows.runners import make_task_runner
    from flows.settings import Settings

    files, questions = _sample_corpus()
    print(f"== Ingesting the bundled sample corpus into {root}")
    ingest = ingest_flow.with_options(task_runner=make_task_runner(Settings()))
    for path, code in files:
        report = ingest(paths=[str(path)], doc_code=code, store=str(root), index_uri=Settings().index_uri or "faiss")
        print_ingest(report)
    print()
    outcomes = []
    started = time.perf_counter()
    for q in questions:
        print(f"== Q: {q}")
        answer = answer_flow(question=q, store=str(root))
        print(format_answer(answer))
        print()
        outcomes.append(answer.status == "success")
    print(f"({len(questions)} questions answered in {time.perf_counter() - started:.1f} s)")
    expected = [True] * (len(questions) - 1) + [False]
    if os.environ.get("CITEBOUND_PREFECT", "background") == "background":
        print(f"(Your local Prefect server keeps running, so later commands start fast. Try\n"
              f" citebound --store {root} ask \"What is theft?\"   and stop it with   citebound server --stop)")
    if outcomes == expected:
        print(f"Demo OK: {len(questions) - 1} grounded, cited answers and 1 refusal, as expected.")
        return 0
    print(f"Demo did not behave as expected: grounded={outcomes}, expected {expected}", file=sys.stderr)
    return 1


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The demo command."""
    sp = sub.add_parser("demo", help="ingest the bundled sample corpus and ask three questions")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_demo, runs_flows=True)
