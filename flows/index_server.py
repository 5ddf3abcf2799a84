"""A local Milvus-protocol server for development, tests and benches: ``milvus-lite server`` on 127.0.0.1.

``with milvus_lite_server(data_dir) as server:`` starts it in its own process group on a free loopback port, waits
until it listens (about 1-2 s here), yields its ``uri`` (``http://127.0.0.1:PORT``) and ``pid``, and stops it on the way out whatever
happened (SIGTERM, then SIGKILL to the group): no process outlives the block. milvus-lite 3.x is a pure-Python
reimplementation of the Milvus protocol, not Milvus (see ``stages.adapters.milvus_index``); production points
``CITEBOUND_INDEX_URI`` at Milvus Standalone or Distributed instead.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contracts.errors import ConfigError
from flows.localhost import free_port, wait_until

__all__ = ["milvus_lite_server", "LocalServer"]


@dataclass(frozen=True)
class LocalServer:
    uri: str
    pid: int


@contextmanager
def milvus_lite_server(data_dir: Path, *, port: int | None = None, timeout: float = 120.0) -> Iterator[LocalServer]:
    """Run ``milvus-lite server --data-dir DATA_DIR --host 127.0.0.1 --port PORT`` for the block. The server's
    output goes to ``DATA_DIR.log``."""
    data_dir = Path(data_dir)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log_path = data_dir.with_suffix(".log")
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(data_dir), "--host", "127.0.0.1",
             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

        def listening() -> bool:
            if proc.poll() is not None:
                raise ConfigError(f"milvus-lite server exited with {proc.returncode}: "
                                  f"{log_path.read_text(errors='replace')[-1500:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            except OSError:
                return False
            return True

        try:
            if not wait_until(listening, timeout):
                raise ConfigError(f"milvus-lite server did not listen on {port} within {timeout:.0f} s")
            yield LocalServer(uri=f"http://127.0.0.1:{port}", pid=proc.pid)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=15)
