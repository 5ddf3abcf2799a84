"""A local Prefect server kept warm in the background, so everyday CLI runs skip Prefect's start-up.

An ephemeral Prefect server costs 8-24 s per process on 2 cores. ``ensure_server`` instead starts
``prefect server start`` once (database inside the store), records its port and pid in
``<store>/prefect/server.json`` and reuses it from every later process. ``PREFECT_API_URL``, when set,
always wins (a shared or remote server). ``stop_server`` ends the server and any worker we started.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from contracts.errors import ConfigError
from flows.store_guard import guard_argv

__all__ = ["ensure_server", "stop_server", "server_status", "healthy"]


def _state_path(store_root: Path) -> Path:
    return Path(store_root) / "prefect" / "server.json"


def healthy(api_url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url.rstrip('/')}/health", timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False  # waitpid(0 or negative) would reap *any* child of ours
    try:
        # Our own child that has exited is a zombie until reaped, and kill(0) still finds a zombie:
        # reap it here, else stop_server waits its full timeout and then SIGKILLs a process already gone.
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child: its parent reaps it
    except OSError:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def read_process_state(path: Path) -> dict | None:
    """A recorded background process (``server.json``, ``worker.json``) with ``alive`` added, or None."""
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text())
    except ValueError:
        return None
    state["alive"] = _alive(int(state.get("pid", 0)))
    return state


def server_status(store_root: Path) -> dict | None:
    state = read_process_state(_state_path(store_root))
    if state is not None:
        state["healthy"] = state["alive"] and healthy(state.get("api_url", ""))
    return state


def ensure_server(store_root: Path, *, timeout: float = 150.0) -> str:
    """The API URL of a healthy local Prefect server for this store, starting one if needed.

    Check-and-start runs under the store's ``prefect-server`` lock, so two processes arriving at once on
    a fresh store start one server between them: the second waits, then finds the first one's healthy.
    """
    if os.environ.get("PREFECT_API_URL"):
        return os.environ["PREFECT_API_URL"]
    from contracts.store import ArtifactStore

    store_root = Path(store_root).resolve()
    with ArtifactStore(store_root).lock("prefect-server"):
        return _ensure_server_locked(store_root, timeout)


def _ensure_server_locked(store_root: Path, timeout: float) -> str:
    state = server_status(store_root)
    if state and state["healthy"]:
        os.environ["PREFECT_API_URL"] = state["api_url"]
        return state["api_url"]
    port = _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    log_path = store_root / "prefect" / "server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PREFECT_HOME": str(store_root / "prefect"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "PREFECT_UI_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING",
           # Task-run events make back-to-back runs collide on SQLite (503 + a 2 s client back-off). Flow runs
           # still show in Prefect; every task's inputs, output and timing are in the store's run records.
           "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED": "false"}
    env.pop("PREFECT_API_URL", None)
    with open(log_path, "ab") as log:
        # Under a guard that stops the server if the store folder is deleted (flows/store_guard.py).
        proc = subprocess.Popen(
            guard_argv(store_root, [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                                    "--port", str(port)]),
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True,
            cwd=Path(__file__).resolve().parent.parent,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ConfigError(f"the Prefect server exited at start-up (code {proc.returncode}); see {log_path}")
        if healthy(api_url):
            _state_path(store_root).write_text(json.dumps({"pid": proc.pid, "port": port, "api_url": api_url}))
            os.environ["PREFECT_API_URL"] = api_url
            return api_url
        time.sleep(0.3)
    proc.terminate()
    raise ConfigError(f"the Prefect server did not become healthy within {timeout:.0f} s; see {log_path}")


def stop_recorded_process(path: Path) -> bool:
    """Stop the background process a state file names (SIGINT, then SIGKILL after 10 s); remove the file."""
    if not path.exists():
        return False
    try:
        pid = int(json.loads(path.read_text())["pid"])
    except (ValueError, KeyError):
        pid = 0
    stopped = False
    if pid and _alive(pid):
        # SIGINT: Prefect's processes shut down cleanly on it (SIGTERM prints asyncio tracebacks).
        try:
            os.killpg(pid, signal.SIGINT)
        except OSError:
            os.kill(pid, signal.SIGINT)
        for _ in range(50):
            if not _alive(pid):
                break
            time.sleep(0.2)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        stopped = True
    path.unlink(missing_ok=True)
    return stopped


def stop_server(store_root: Path) -> bool:
    """Stop the answer service, worker and server recorded for this store. Returns whether any was running."""
    base = Path(store_root).resolve() / "prefect"
    # The service and the worker use the server: stop them first.
    results = [stop_recorded_process(base / name) for name in ("service.json", "worker.json", "server.json")]
    return any(results)
