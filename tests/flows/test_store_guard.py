"""A store's background processes end when the store folder is deleted (flows/store_guard.py, flows/service.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.server import _alive, healthy, server_status, stop_recorded_process, stop_server
from flows.store_guard import guard_argv

ROOT = Path(__file__).resolve().parents[2]


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    (store / "prefect").mkdir(parents=True)
    return store


def _sleeper(pid_file: Path) -> list[str]:
    """A child that records its pid and sleeps for two minutes."""
    return [sys.executable, "-c",
            f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"]


def _start(store: Path, command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(guard_argv(store, command), cwd=ROOT, start_new_session=True)


def _pid_of(pid_file: Path, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pid_file.exists() and pid_file.read_text():
            return int(pid_file.read_text())
        time.sleep(0.05)
    raise AssertionError(f"the child never wrote {pid_file}")


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.unit
def test_the_guard_exits_with_its_childs_exit_code(tmp_path):
    proc = subprocess.run(guard_argv(_store(tmp_path), [sys.executable, "-c", "raise SystemExit(3)"]), cwd=ROOT,
                          timeout=60)
    assert proc.returncode == 3


@pytest.mark.unit
def test_deleting_the_store_stops_the_guarded_process(tmp_path):
    store, pid_file = _store(tmp_path), tmp_path / "child.pid"
    guard = _start(store, _sleeper(pid_file))
    child = _pid_of(pid_file)
    try:
        time.sleep(2.5)  # a full poll with the store present: the child must still be running
        assert guard.poll() is None and _alive(child)
        shutil.rmtree(store)
        assert guard.wait(timeout=20) == 0
        assert _gone(child, 10)
    finally:
        guard.kill()


@pytest.mark.unit
def test_stopping_the_recorded_group_stops_guard_and_child(tmp_path):
    store, pid_file = _store(tmp_path), tmp_path / "child.pid"
    guard = _start(store, _sleeper(pid_file))
    child = _pid_of(pid_file)
    state = store / "prefect" / "server.json"
    state.write_text(json.dumps({"pid": guard.pid}))
    try:
        assert stop_recorded_process(state) is True  # SIGINT to the group, as `citebound server --stop` does
        assert _gone(guard.pid, 15) and _gone(child, 15)
        assert not state.exists()
    finally:
        guard.kill()


@pytest.mark.unit
def test_a_sigint_to_the_guard_alone_is_passed_on(tmp_path):
    import signal

    store, pid_file = _store(tmp_path), tmp_path / "child.pid"
    guard = _start(store, _sleeper(pid_file))
    child = _pid_of(pid_file)
    try:
        os.kill(guard.pid, signal.SIGINT)  # not the group: the child gets nothing unless the guard forwards it
        assert guard.wait(timeout=20) != 0  # the child's KeyboardInterrupt exit code
        assert _gone(child, 10)
    finally:
        guard.kill()


@pytest.mark.integration
@pytest.mark.slow
def test_deleting_a_store_stops_its_prefect_server_and_answer_service(tmp_path):
    from flows.cli import main
    from flows.service import ensure_service, service_state_path
    from tests.fixtures.statutes import PENAL_CODE

    store = tmp_path / "store"
    src = tmp_path / "penal_code.txt"
    src.write_text(PENAL_CODE, encoding="utf-8")
    saved = {k: os.environ.get(k) for k in ("CITEBOUND_PREFECT", "PREFECT_API_URL", "CITEBOUND_SERVICE")}
    for key in saved:
        os.environ.pop(key, None)
    os.environ["CITEBOUND_PREFECT"] = "background"
    try:
        assert main(["--store", str(store), "ingest", str(src), "--doc-code", "IPC"]) == 0
        service = ensure_service(store)
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
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
