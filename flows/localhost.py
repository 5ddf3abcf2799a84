"""The loopback helpers every process that starts a local server shares (the Milvus-lite server here, the API and
the Prefect server in the tests and benches): a free port, and waiting until a condition holds.

A leaf: it imports nothing from the project, so the tests and benches take these from here too rather than each
keeping its own copy.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["free_port", "wait_until"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the system's pick; free until someone binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float, *, interval: float = 0.2) -> T:
    """Call ``condition`` every ``interval`` seconds until it returns something true or ``timeout`` seconds have
    passed; what it returned last (so false when time ran out). An exception from ``condition`` is not caught:
    raising is how a condition says that waiting longer is pointless (the process it waits for has exited)."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(interval)
