"""Run the chosen suites in order, collect their answers for the grounding suite, and write the report.

``report.json`` (an ``EvalReport``) and ``report.html`` (rendered from it) are written atomically into the
output folder: an interrupted run leaves the previous report whole or none at all, never half of one.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import os
import platform
import subprocess
import time
from pathlib import Path

from contracts.errors import ConfigError
from contracts.evaluation import EvalFloors, EvalReport, SuiteReport
from contracts.store import atomic_write
from evaluation.floors import DEFAULT_FLOORS, check, load_floors
from evaluation.suite import AnsweredItem, EvalContext

__all__ = ["ANSWERING_SUITES", "SUITES", "check_data_root", "choose_suites", "failed_checks", "machine_info", "plan_eval", "run_eval",
           "write_report"]

# The order suites run in: grounding last, as it scores the answers the others produced.
SUITES = ("refusal", "hallucination", "injection", "retrieval", "provisions", "questions", "grounding")
ANSWERING_SUITES = ("refusal", "hallucination", "injection", "provisions", "questions")


def choose_suites(requested: list[str] | None, *, has_questions: bool) -> list[str]:
    """The suites to run, in ``SUITES`` order. None = all of them (``questions`` only with a questions file).
    Grounding alone brings refusal and hallucination along: it needs answers to score."""
    unknown = [name for name in requested or () if name not in SUITES]
    if unknown:
        raise ConfigError(f"unknown suite(s) {', '.join(unknown)}: choose from {', '.join(SUITES)}")
    chosen = set(requested or [s for s in SUITES if s != "questions" or has_questions])
    if "questions" in chosen and not has_questions:
        raise ConfigError("the questions suite needs --questions FILE (JSONL: question, expected sources)")
    if has_questions and requested is None:
        chosen.add("questions")
    if "grounding" in chosen and not chosen & set(ANSWERING_SUITES):
        chosen |= {"refusal", "hallucination"}
    return [s for s in SUITES if s in chosen]


def check_data_root(path: Path) -> Path:
    if not path.is_dir():
        raise ConfigError(f"no evaluation data at {path}: set CITEBOUND_SHARED_DATA to the shared/data folder")
    return path


def plan_eval(
    *,
    data_root: Path,
    cache_dir: Path,
    llm: dict[str, str],
    suites: list[str] | None = None,
    questions: str | None = None,
    floors: str | None = None,
    subset: str = "full",
    resamples: int = 1000,
    store_root: Path | None = None,
    tenant: str = "default",
    project: str = "default",
    index_uri: str | None = None,
    verifier: str | None = None,
) -> tuple[EvalContext, list[str], EvalFloors]:
    """What a run will do, from settings its edge (the CLI, the Prefect flow) resolved: the context, the suites
    in order and the floors. Every bad input is a one-line ``ConfigError`` here, before any suite starts."""
    if subset not in ("full", "ci"):
        raise ConfigError(f"unknown subset {subset!r}: full or ci")
    questions_file = Path(questions).expanduser().resolve() if questions else None
    if questions_file is not None and not questions_file.is_file():
        raise ConfigError(f"--questions {questions}: no such file")
    chosen = choose_suites(suites or None, has_questions=questions_file is not None)
    ctx = EvalContext(data_root=check_data_root(data_root), cache_dir=cache_dir.expanduser().resolve(),
                      subset=subset, llm=llm, resamples=resamples,
                      store_root=store_root if questions_file else None, tenant=tenant, project=project,
                      questions_file=questions_file, index_uri=index_uri or None, verifier=verifier)
    return ctx, chosen, load_floors(Path(floors) if floors else DEFAULT_FLOORS)


def failed_checks(report: EvalReport) -> list[str]:
    """``"metric (floor 0.8)"`` for each bound the report fails."""
    return [f"{c.metric} ({c.bound} {c.limit:g})" for c in report.checks if c.passed is False]


def machine_info() -> dict[str, str]:
    repo = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=False).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    try:
        mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal:"))
        memory = f"{mem_kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        memory = "unknown"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {"host": platform.node(), "cores": str(os.cpu_count() or 0), "memory": memory,
            "python": platform.python_version(), "platform": platform.platform(terse=True),
            "commit": commit, "load at start": f"{load:.2f}"}


def run_eval(ctx: EvalContext, suites: list[str], floors: EvalFloors | None = None) -> EvalReport:
    started = time.perf_counter()
    reports: list[SuiteReport] = []
    answered: list[AnsweredItem] = []
    for name in suites:
        module = importlib.import_module(f"evaluation.suites.{name}")
        output = module.run(ctx, tuple(answered))
        reports.append(output.report)
        answered.extend(output.answered)
    report = EvalReport(
        created_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        subset=ctx.subset,
        suites=tuple(reports),
        settings={"data": str(ctx.data_root), "llm": ctx.llm.get("backend", "extractive")
                  + (f" {ctx.llm.get('model')} at {ctx.llm.get('base_url')}" if ctx.llm.get("backend") == "openai" else ""),
                  "subset": ctx.subset, "bootstrap resamples": str(ctx.resamples), "suites": ", ".join(suites),
                  **({"questions": str(ctx.questions_file)} if ctx.questions_file else {}),
                  **({"store": str(ctx.store_root)} if ctx.store_root and ctx.questions_file else {})},
        machine=machine_info(),
        seconds=round(time.perf_counter() - started, 1),
    )
    if floors is not None:
        report = report.model_copy(update={"floors_version": floors.version, "checks": check(report, floors)})
    return report


def write_report(report: EvalReport, out_dir: Path) -> tuple[Path, Path]:
    from evaluation.html import render_html

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out_dir / "report.json", out_dir / "report.html"
    atomic_write(json_path, (report.model_dump_json(indent=2) + "\n").encode("utf-8"))
    atomic_write(html_path, render_html(report).encode("utf-8"))
    return json_path, html_path
