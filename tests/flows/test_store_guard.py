"""A store's background processes end when the store folder is deleted (flows/store_guard.py, flows/service.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from flows.server import _alive, healthy, server_status, stop_recorded_process, stop_server
from flows.store_guard import guard_argv

ROOT = Path(__file__).resolve().parents[2]


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    (store / "prefect").mkdir(parents=True)
    return store


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@dataclass
class Guarded:
    store: Path
    guard: subprocess.Popen
    child: int


@pytest.fixture
def guarded(tmp_path):
    """A guard for a fresh store around a child that records its pid and sleeps for two minutes."""
    store, pid_file = _store(tmp_path), tmp_path / "child.pid"
    sleeper = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    guard = subprocess.Popen(guard_argv(store, [sys.executable, "-c", sleeper]), cwd=ROOT, start_new_session=True)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline and guard.poll() is None, "the child never started"
        time.sleep(0.05)
    yield Guarded(store, guard, int(pid_file.read_text()))
    try:
        os.killpg(guard.pid, signal.SIGKILL)  # guard and child, whatever the test left running
    except OSError:
        pass
    guard.wait()


@pytest.mark.unit
def test_the_guard_exits_with_its_childs_exit_code(tmp_path):
    proc = subprocess.run(guard_argv(_store(tmp_path), [sys.executable, "-c", "raise SystemExit(3)"]), cwd=ROOT,
                          timeout=60)
    assert proc.returncode == 3


@pytest.mark.unit
def test_deleting_the_store_stops_the_guarded_process(guarded):
    time.sleep(2.5)  # a full poll with the store present: the child must still be running
    assert guarded.guard.poll() is None and _alive(guarded.child)
    shutil.rmtree(guarded.store)
    assert guarded.guard.wait(timeout=20) == 0
    assert _gone(guarded.child, 10)


@pytest.mark.unit
def test_stopping_the_recorded_group_stops_guard_and_child(guarded):
    state = guarded.store / "prefect" / "server.json"
    state.write_text(json.dumps({"pid": guarded.guard.pid}))
    assert stop_recorded_process(state) is True  # SIGINT to the group, as `citebound server --stop` does
    assert _gone(guarded.guard.pid, 15) and _gone(guarded.child, 15)
    assert not state.exists()


@pytest.mark.unit
def test_a_sigint_to_the_guard_alone_is_passed_on(guarded):
    os.kill(guarded.guard.pid, signal.SIGINT)  # not the group: the child gets nothing unless the guard forwards it
    assert guarded.guard.wait(timeout=20) != 0  # the child's KeyboardInterrupt exit code
    assert _gone(guarded.child, 10)


@pytest.mark.integration
@pytest.mark.slow
def test_deleting_a_store_stops_its_prefect_server_and_answer_service(tmp_path, prefect_harness, monkeypatch):
    from flows.cli import main
    from flows.service import ensure_service, service_state_path
    from tests.fixtures.statutes import PENAL_CODE

    store = tmp_path / "store"
    src = tmp_path / "penal_code.txt"
    src.write_text(PENAL_CODE, encoding="utf-8")
    # Ingest under the session's Prefect harness, so that nothing in this process reports to the store's own
    # server (its queued logs and events would be retried against a dead server at exit).
    assert main(["--store", str(store), "ingest", str(src), "--doc-code", "IPC"]) == 0
    monkeypatch.setenv("CITEBOUND_PREFECT", "background")
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    try:
        service = ensure_service(store)  # starts the store's server too, from the service process
        server = server_status(store)
        assert server is not None and server["healthy"]
        assert json.loads(service_state_path(store).read_text())["pid"] == service["pid"]
        shutil.rmtree(store)
        assert _gone(int(service["pid"]), 30), "the answer service outlived its store"
        assert _gone(int(server["pid"]), 30), "the Prefect server's guard outlived its store"
        assert not healthy(server["api_url"])
    finally:
        if store.exists():
            stop_server(store)
