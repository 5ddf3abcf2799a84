"""`citebound mcp` as a process: killed (SIGKILL, SIGTERM) or left by its client (stdin closed), nothing it started
is left behind: it starts no Prefect server and no worker of its own."""

from __future__ import annotations

import signal
import subprocess
import time
import uuid

import pytest

from tests.api.conftest import free_port
from tests.faults.conftest import MARK, marked_processes, seconds_until_none_left
from tests.mcp.conftest import ROOT, citebound, env

pytestmark = [pytest.mark.integration, pytest.mark.slow]

INIT = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
        '"clientInfo":{"name":"t","version":"1"}}}\n')
CALL = ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search",'
        '"arguments":{"query":"wrongful gain","k":1}}}\n')


def start_serving(store, user_home) -> tuple[subprocess.Popen, str]:  # noqa: ANN001
    """A `citebound mcp` that has answered a search (so its engine, model and index are loaded), marked; with the
    user's default Prefect mode (a background server for commands that run flows), which it must not start."""
    mark = uuid.uuid4().hex
    user = {"CITEBOUND_PREFECT": "background", "CITEBOUND_USER_HOME": str(user_home),
            "CITEBOUND_PREFECT_PORT": str(free_port()), MARK: mark}
    proc = subprocess.Popen(citebound(store, "mcp", "--tenant", "a"), env={**env(), **user}, cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    proc.stdin.write(INIT)
    proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.write(CALL)
    proc.stdin.flush()
    for line in proc.stdout:
        if '"id":2' in line.replace(" ", ""):
            assert '"status":"found"' in line.replace(" ", ""), line[:500]
            return proc, mark
    raise AssertionError(f"citebound mcp ended ({proc.wait(timeout=60)}) before answering")


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "stdin closed"])
def test_an_ended_mcp_server_leaves_no_process(store, how, tmp_path):
    proc, mark = start_serving(store, tmp_path / "user")
    try:
        assert marked_processes(mark), "the marked server is alive"
        ended = time.monotonic()
        if how == "stdin closed":
            proc.stdin.close()
        else:
            proc.send_signal(getattr(signal, how))
        seconds_until_none_left(mark, ended, proc.pid)
        proc.wait(timeout=60)
        if how == "stdin closed":
            assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
        for p in marked_processes(mark):
            p.kill()
