"""The ``eval`` flow: ``citebound eval`` as a Prefect deployment, so a team can run it on a schedule.

It runs the same suites and writes the same ``report.json`` / ``report.html`` as the CLI; with ``check`` (the
default) a failed floor fails the flow run, which Prefect shows and can alert on. The data and cache folders
are parameters, filled by ``prefect.yaml`` from the worker's environment.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from contracts.errors import CiteboundError
from evaluation.runner import failed_checks, plan_eval, run_eval, write_report
from flows.backends import llm_spec_from_settings
from flows.settings import Settings

__all__ = ["EvalFloorsFailed", "eval_flow"]


class EvalFloorsFailed(CiteboundError):
    """Raised by the eval flow when ``check`` is set and a metric misses its floor (or passes its ceiling)."""


@flow(name="eval", log_prints=False)
def eval_flow(
    out: str,
    data_root: str | None = None,
    subset: str = "ci",
    suites: list[str] | None = None,
    questions: str | None = None,
    store: str | None = None,
    tenant: str = "default",
    project: str = "default",
    llm: str | None = None,
    cache: str | None = None,
    check: bool = True,
    floors: str | None = None,
) -> dict[str, object]:
    settings = Settings()
    ctx, chosen, bounds = plan_eval(
        data_root=Path(data_root).expanduser().resolve() if data_root else settings.shared_data_dir,
        cache_dir=Path(cache) if cache else settings.eval_cache, llm=llm_spec_from_settings(settings, llm),
        suites=suites, questions=questions, floors=floors, subset=subset,
        store_root=Path(store or settings.home).expanduser().resolve(), tenant=tenant, project=project,
        verifier=settings.verifier)
    report = run_eval(ctx, chosen, bounds)
    json_path, html_path = write_report(report, Path(out).expanduser().resolve())
    failed = failed_checks(report)
    get_run_logger().info("eval report %s: %d metrics, %d bound(s) failed", html_path,
                          sum(len(s.metrics) for s in report.suites), len(failed))
    if check and failed:
        raise EvalFloorsFailed(f"{len(failed)} bound(s) failed: {', '.join(failed)} (report {html_path})")
    return {"report": str(html_path), "json": str(json_path), "failed": failed}
