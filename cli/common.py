"""What every command shares: the store folder, the process set-up before flows run, ``--set`` parsing and
the options every command takes."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

__all__ = ["store_root", "prepare", "parse_sets", "add_common", "check_writable"]


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
