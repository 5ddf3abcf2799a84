"""What every command shares: the store folder, the process set-up before flows run, ``--set`` parsing and
the options every command takes."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

__all__ = ["store_root", "prepare", "parse_sets", "add_common", "check_writable", "quiet_store_refusals"]

# The loggers Prefect's flow and task engines report a failed run on (``prefect.logging.get_logger``).
_PREFECT_RUN_LOGGERS = ("prefect.engine", "prefect.flow_runs", "prefect.task_runs")


def store_root(args: argparse.Namespace) -> Path:
    return Path(args.store or os.environ.get("CITEBOUND_HOME") or "artifacts").expanduser().resolve()


def check_writable(root: Path) -> None:
    """Refuse now, in one line, a store the file system will not let us write (read-only, full, no permission),
    before a flow starts and fails in the middle."""
    import tempfile

    from contracts.errors import StorageError

    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=root, prefix=".write-check.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise StorageError("write", root, exc) from exc


def _is_store_refusal(record: logging.LogRecord) -> bool:
    from contracts.errors import StorageError

    exc = record.exc_info[1] if record.exc_info else None
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, StorageError):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return "StorageError" in record.getMessage()  # "Finished in state Failed(... StorageError: ...)"


def quiet_store_refusals() -> None:
    """Keep Prefect from reporting a run the store's file system refused (full, read-only, no permission):
    ``cli.main`` says that in one line (path and cause) and exits 2. Every other failure is still logged.
    Filters on the loggers themselves, so Prefect's own logging set-up (at its import) keeps them."""
    for name in _PREFECT_RUN_LOGGERS:
        logger = logging.getLogger(name)
        if _drop_store_refusals not in logger.filters:
            logger.addFilter(_drop_store_refusals)


def _drop_store_refusals(record: logging.LogRecord) -> bool:
    return not _is_store_refusal(record)


def prepare(args: argparse.Namespace, *, prefect: bool = True) -> Path:
    from flows.settings import configure_process_env, configure_query_process

    root = store_root(args)
    root.mkdir(parents=True, exist_ok=True)
    os.environ["CITEBOUND_HOME"] = str(root)
    if args.command in ("ask", "retrieve", "api"):
        configure_query_process()
    configure_process_env(root)
    if prefect and os.environ.get("CITEBOUND_PREFECT", "background") == "background":
        from flows.server import ensure_server

        t0 = time.perf_counter()
        ensure_server()
        took = time.perf_counter() - t0
        if took > 3:
            print(f"(started your local Prefect server in {took:.1f} s; later commands reuse it; "
                  "`citebound server --stop` ends it)", file=sys.stderr)
    return root


def parse_sets(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"citebound: --set wants key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def add_common(sp: argparse.ArgumentParser, scope: bool = True) -> None:
    """``--store`` and ``--json`` on every command; ``--tenant`` / ``--project`` where it acts in one scope."""
    sp.add_argument("--store", default=argparse.SUPPRESS, help="store folder")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    if scope:
        sp.add_argument("--tenant", default="default")
        sp.add_argument("--project", default="default")
