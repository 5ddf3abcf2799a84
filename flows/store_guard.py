"""Run a store's background process and end it when the store is deleted.

A store's Prefect server and worker run detached, recorded in ``<store>/prefect/*.json``. Deleting the store
folder deletes those records, and nothing would stop the processes any more (they keep their open database
files and their port). ``python -m flows.store_guard --store S -- CMD ...`` runs CMD as its child, in the same
process group, and checks every ``POLL_SECONDS`` that ``<store>/prefect`` still exists: when it is gone it
interrupts the child (SIGINT, Prefect's clean shutdown; SIGKILL after ``GRACE_SECONDS``) and exits. When the
child exits the guard exits with its code. A SIGINT to the group (``flows.server.stop_recorded_process``)
reaches the child directly and the guard waits for it; a SIGTERM to the guard alone is passed on.

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
from collections.abc import Sequence
from pathlib import Path

__all__ = ["guard", "guard_argv", "POLL_SECONDS", "GRACE_SECONDS"]

POLL_SECONDS = 2.0
GRACE_SECONDS = 10.0


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
    # Handlers, not SIG_IGN: an ignored signal would be inherited by the child's exec; a handler is reset.
    signal.signal(signal.SIGINT, lambda *_: None)  # the group's SIGINT reaches the child itself; wait for it
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    while True:
        try:
            return child.wait(timeout=poll_seconds)
        except subprocess.TimeoutExpired:
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
