"""The ``citebound eval`` command: resolve settings once, run the suites with a progress bar, write the report,
print the table, and with ``--check`` exit 1 when a bound fails."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["run_eval_command"]


def _writable_folder(out: Path) -> Path:
    """``out``, created if need be; a one-line ConfigError when it cannot hold the report."""
    from contracts.errors import ConfigError

    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".citebound-write-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot write the report there ({exc.strerror or exc})") from exc
    return out


def run_eval_command(args: argparse.Namespace, store_root: Path | None) -> int:
    """``citebound eval``: settings resolved here, once; suites get them as an ``EvalContext``."""
    import dataclasses

    from evaluation.progress import RichProgress
    from evaluation.runner import failed_checks, plan_eval, run_eval, write_report
    from flows.backends import llm_spec_from_settings
    from flows.settings import Settings, configure_process_env

    settings = Settings()
    ctx, suites, floors = plan_eval(
        data_root=settings.shared_data_dir, cache_dir=Path(args.cache) if args.cache else settings.eval_cache,
        llm=llm_spec_from_settings(settings, args.llm, args.llm_model, args.llm_url), suites=args.suite,
        questions=args.questions, floors=args.floors, subset=args.subset, resamples=args.resamples,
        store_root=store_root, tenant=args.tenant, project=args.project, index_uri=settings.index_uri,
        verifier=args.verifier)
    configure_process_env(store_root)  # offline, quiet libraries: before torch is imported
    out = _writable_folder(Path(args.out).expanduser().resolve())  # before minutes of work, not after
    try:
        with RichProgress() as progress:
            report = run_eval(dataclasses.replace(ctx, progress=progress), suites, floors)
    except KeyboardInterrupt:
        print(f"citebound: eval interrupted; {out} keeps its previous report, if any", file=sys.stderr)
        return 130
    json_path, html_path = write_report(report, out)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        _print_eval(report)
        print(f"report: {html_path} (data: {json_path}); {report.seconds:.0f} s")
    failed = failed_checks(report)
    if args.check and failed:
        print(f"citebound: {len(failed)} bound(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _print_eval(report) -> None:  # noqa: ANN001
    """One row per metric, by id (the data sets are spelled out in report.html)."""
    from rich.console import Console
    from rich.table import Table

    bounds = {c.metric: c for c in report.checks}
    table = Table(title=f"citebound eval ({report.subset} run)", title_justify="left")
    for col, just in (("metric", "left"), ("split", "left"), ("value", "right"), ("95% CI", "right"),
                      ("count", "right"), ("bound", "left")):
        table.add_column(col, justify=just, no_wrap=True)
    for suite in report.suites:
        for m in suite.metrics:
            chk = bounds.get(m.id)
            mark = "" if chk is None else ("not measured" if chk.passed is None else
                                           f"{'ok' if chk.passed else 'FAIL'} {chk.bound} {chk.limit:g}")
            table.add_row(m.id, m.split, f"{m.value:.3f}", f"{m.ci.low:.3f}–{m.ci.high:.3f}",
                          f"{m.count} / {m.n}" if m.count is not None else str(m.n),
                          f"[red]{mark}[/red]" if chk is not None and chk.passed is False else mark)
    Console(width=max(150, Console().width)).print(table)
