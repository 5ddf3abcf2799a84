"""Run a store's background process and end it when the store is deleted.

A store's Prefect server and worker run detached, recorded in ``<store>/prefect/*.json``. Deleting the store
folder deletes those records, and nothing would stop the processes any more (they keep their open database
files and their port). ``python -m flows.store_guard --store S -- CMD ...`` runs CMD as its child, in the same
process group, and checks every ``POLL_SECONDS`` that ``<store>/prefect`` still exists: when it is gone it
interrupts the child (SIGINT, Prefect's clean shutdown; SIGKILL after ``GRACE_SECONDS``) and exits. When the
child exits the guard exits with its code. A SIGINT to the group (``flows.server.stop_recorded_process``)
reaches the child directly and the guard waits for it (a SIGINT to the guard alone is passed on after
``FORWARD_AFTER`` seconds); a SIGTERM to the guard is passed on at once.

The guard is a plain Python process that sleeps between two ``stat`` calls (no imports beyond the standard
library): a few MB of memory per guarded process.

>>> guard_argv("/s", ["prefect", "server", "start"])[3:]
['--store', '/s', '--', 'prefect', 'server', 'start']
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["guard", "guard_argv", "POLL_SECONDS", "GRACE_SECONDS"]

POLL_SECONDS = 2.0
GRACE_SECONDS = 10.0
FORWARD_AFTER = 2.0


def guard_argv(store_root: str | Path, command: Sequence[str]) -> list[str]:
    """The command line that runs ``command`` under a guard for ``store_root``."""
    return [sys.executable, "-m", "flows.store_guard", "--store", str(store_root), "--", *command]


def _end(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGINT)
    try:
        child.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def guard(store_root: Path, command: Sequence[str], *, poll_seconds: float = POLL_SECONDS) -> int:
    """Run ``command`` until it exits (its exit code) or ``<store_root>/prefect`` disappears (0)."""
    marker = Path(store_root) / "prefect"
    child = subprocess.Popen(list(command))
    interrupted: list[float] = []
    # Handlers, not SIG_IGN: an ignored signal would be inherited by the child's exec; a handler is reset.
    # A SIGINT to the whole group reaches the child itself, and a second one would cut Prefect's clean
    # shutdown short: pass one on only if the child is still running FORWARD_AFTER seconds later (the
    # SIGINT was sent to the guard alone).
    signal.signal(signal.SIGINT, lambda *_: interrupted.append(time.monotonic()))
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    forwarded = False
    while True:
        try:
            return child.wait(timeout=min(poll_seconds, 0.5) if interrupted else poll_seconds)
        except subprocess.TimeoutExpired:
            if interrupted and not forwarded and time.monotonic() - interrupted[0] >= FORWARD_AFTER:
                child.send_signal(signal.SIGINT)
                forwarded = True
            if not marker.is_dir():
                print(f"citebound: {marker} is gone; stopping {command[0]} (pid {child.pid})", file=sys.stderr)
                _end(child)
                return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    return guard(args.store, command)


if __name__ == "__main__":
    sys.exit(main())
