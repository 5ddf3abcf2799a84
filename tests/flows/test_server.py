"""The user's local Prefect server: one per user (shared by every store), started and stopped by Prefect's
own `prefect server start --background` / `prefect server stop`, found again after the command that started
it was killed."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from flows.localhost import free_port, wait_until
from tests.fixtures.statutes import PENAL_CODE

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def user_env(tmp_path, monkeypatch):
    """A fresh user home and port for this test's server; whatever it started is stopped after."""
    # ensure_server exports the URL it found (as the CLI does for its flow runs). monkeypatch records nothing for
    # a delenv of an absent variable, so the test's URL is undone here: a later test must not find a stopped server.
    saved_url = os.environ.get("PREFECT_API_URL")
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("CITEBOUND_USER_HOME", str(tmp_path / "user"))
    monkeypatch.setenv("CITEBOUND_PREFECT_PORT", str(free_port()))
    monkeypatch.setenv("CITEBOUND_PREFECT", "background")
    yield tmp_path
    from flows.server import stop_server

    stop_server()
    if saved_url is None:
        os.environ.pop("PREFECT_API_URL", None)
    else:
        os.environ["PREFECT_API_URL"] = saved_url


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmdline and int(entry.name) != os.getpid():
                pids.append(int(entry.name))
    return pids


def _start_server(store: str, results) -> None:  # noqa: ANN001 - runs in a child process
    from flows.server import ensure_server

    results.put(ensure_server(Path(store)))


def test_two_stores_starting_at_once_share_the_users_one_server(user_env):
    from flows.server import healthy, server_status, stop_server

    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    children = [ctx.Process(target=_start_server, args=(str(user_env / f"store{i}"), results)) for i in range(2)]
    for child in children:
        child.start()
    urls = [results.get(timeout=300) for _ in children]
    for child in children:
        child.join(timeout=60)
    assert urls[0] == urls[1] == f"http://127.0.0.1:{os.environ['CITEBOUND_PREFECT_PORT']}/api"
    state = server_status()
    assert state["healthy"] and state["pid"]
    port = os.environ["CITEBOUND_PREFECT_PORT"]
    assert len(_processes_mentioning(f"--port {port}")) == 1  # one server, not one per store or per process
    assert stop_server() is True
    assert not healthy(urls[0]) or _wait_unhealthy(urls[0])
    assert server_status()["pid"] is None


def _wait_unhealthy(url: str) -> bool:
    from flows.server import healthy

    return wait_until(lambda: not healthy(url), 30)


def test_a_sigkilled_client_leaves_only_the_server_and_stop_finds_it(user_env):
    from cli.main import main
    from flows.server import healthy, local_api_url

    src = user_env / "penal_code.txt"
    src.write_text(PENAL_CODE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    client = subprocess.Popen([sys.executable, "-m", "cli", "--store", str(user_env / "store"), "ingest",
                               str(src), "--doc-code", "IPC"], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = local_api_url()
    wait_until(lambda: healthy(url) or client.poll() is not None, 240)
    assert healthy(url), "the client did not get the server up"
    client.send_signal(signal.SIGKILL)
    client.wait()
    # Nothing of the killed client remains but the user's server, which Prefect recorded.
    port = os.environ["CITEBOUND_PREFECT_PORT"]
    left = _processes_mentioning(str(user_env))
    server_pids = _processes_mentioning(f"--port {port}")
    assert len(server_pids) == 1
    assert set(left) <= set(server_pids), left
    pid_file = Path(os.environ["CITEBOUND_USER_HOME"]) / "prefect" / "server.pid"
    assert int(pid_file.read_text()) == server_pids[0]
    # `citebound server --stop` from any other process finds and stops it.
    assert main(["server", "--stop"]) == 0
    assert _wait_unhealthy(url)
    wait_until(lambda: not _processes_mentioning(f"--port {port}"), 30)
    assert _processes_mentioning(f"--port {port}") == []
    assert not pid_file.exists()


def test_a_server_killed_outright_is_replaced_on_next_use(user_env):
    from flows.server import ensure_server, healthy, server_status

    url = ensure_server()
    pid = server_status()["pid"]
    os.kill(pid, signal.SIGKILL)
    assert _wait_unhealthy(url)
    # Prefect's pid file still names the dead server: the next command clears it and starts a new one.
    assert ensure_server() == url and healthy(url)
    assert server_status()["pid"] not in (None, pid)
