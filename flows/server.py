"""The user's local Prefect server: one per user (not per store), run and stopped by Prefect itself.

``ensure_server`` returns ``PREFECT_API_URL`` when set (a shared or remote server). Otherwise it checks
``http://127.0.0.1:<CITEBOUND_PREFECT_PORT>/api/health`` and, when nothing answers, starts
``prefect server start`` detached, in its own session, and waits with ``prefect server status --wait``.
``stop_server`` runs ``prefect server stop``. Prefect's home, database, pid file (``server.pid``, the one
``prefect server start --background`` writes and ``prefect server stop`` reads) and the server's log live in
``<CITEBOUND_USER_HOME>/prefect`` (default ``~/.citebound/prefect``), so any process of the user finds the
server, including after the process that started it was killed.

Why not ``--background`` itself: Prefect 3.8 gives the background server a stdout/stderr pipe that nobody
reads once the starting command exits, and the server died the first time it logged (seen during
``prefect deploy``). The same server in the foreground mode, detached with its output in ``server.log`` and
its pid in Prefect's own pid file, behaves the same for ``prefect server stop`` and ``--background``.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from contracts.errors import ConfigError
from flows.settings import Settings

__all__ = ["ensure_server", "stop_server", "server_status", "healthy", "prefect_home", "local_api_url"]


def prefect_home(settings: Settings | None = None) -> Path:
    home = (settings or Settings()).user_home.expanduser().resolve() / "prefect"
    home.mkdir(parents=True, exist_ok=True)
    return home


def local_api_url(settings: Settings | None = None) -> str:
    return f"http://127.0.0.1:{(settings or Settings()).prefect_port}/api"


def healthy(api_url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url.rstrip('/')}/health", timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _server_env(settings: Settings) -> dict[str, str]:
    return {**os.environ, "PREFECT_HOME": str(prefect_home(settings)), "PREFECT_API_URL": local_api_url(settings),
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false",
           "PREFECT_LOGGING_LEVEL": "WARNING",
           # Task-run events make back-to-back runs collide on SQLite (503 + a 2 s client back-off). Flow runs
           # still show in Prefect; every task's inputs, output and timing are in the store's run records.
           "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED": "false",
           **_QUIET_SERVICES}


# The server's housekeeping loops, made to wake once a minute instead of every 5 s, and the two citebound does
# not use switched off (automations' triggers; pausing runs). Idle, the server used 1.6% of a core with
# Prefect's defaults and 0.2% with these (issue 22, measured with psutil over 10 minutes; README "Measured").
# Nothing citebound runs waits on them: flow runs go straight to the API or a worker's poll; the daily ingest
# schedule is made by the scheduler's own 60 s loop.
_QUIET_SERVICES = {
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_PAUSE_EXPIRATIONS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_LATE_RUNS_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_CLEANUP_RECONCILER_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_SCHEDULER_RECENT_DEPLOYMENTS_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_CANCELLATION_CLEANUP_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_FOREMAN_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_REPOSSESSOR_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL": "30",
}


def _prefect(args: list[str], settings: Settings, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prefect", *args], env=_server_env(settings), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=prefect_home(settings))


def ensure_server(store_root: Path | None = None, *, timeout: float = 150.0) -> str:
    """The API URL of a healthy Prefect server for this user, starting one if needed (``store_root`` is
    accepted for older callers and not used: the server is per user)."""
    settings = Settings()
    url = local_api_url(settings)
    given = os.environ.get("PREFECT_API_URL")
    if given and given != url:
        return given  # a shared or remote server (the user's own local URL is checked like any other time)
    if not healthy(url):
        # One start even when several commands arrive at once: the second waits here, then finds it healthy.
        with open(prefect_home(settings) / "start.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not healthy(url):
                _start(settings, timeout)
    os.environ["PREFECT_API_URL"] = url
    return url


def _start(settings: Settings, timeout: float) -> None:
    if (prefect_home(settings) / "server.pid").exists():
        # A server recorded but not answering (killed, or its machine rebooted): Prefect's stop clears it.
        _prefect(["server", "stop"], settings, 60)
    home = prefect_home(settings)
    with open(home / "server.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port",
             str(settings.prefect_port), "--no-ui"],
            env=_server_env(settings), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=home,
            # Its own session: a Ctrl-C at the terminal of the command that started it must not reach the
            # server every other command shares.
            start_new_session=True,
        )
    (home / "server.pid").write_text(str(proc.pid))
    waited = _prefect(["server", "status", "--wait", "--timeout", str(int(timeout))], settings, timeout + 30)
    if waited.returncode != 0 or not healthy(local_api_url(settings)):
        _prefect(["server", "stop"], settings, 60)
        raise ConfigError(f"the Prefect server did not come up within {timeout:.0f} s: "
                          f"{(waited.stdout + waited.stderr)[-800:]}")


def server_status(store_root: Path | None = None) -> dict[str, object]:
    settings = Settings()
    pid_file = prefect_home(settings) / "server.pid"
    url = local_api_url(settings)
    return {"api_url": url, "healthy": healthy(url),
            "pid": int(pid_file.read_text()) if pid_file.exists() and pid_file.read_text().strip().isdigit() else None}


def stop_server(store_root: Path | None = None) -> bool:
    """``prefect server stop`` for this user's server. Returns whether one was recorded."""
    settings = Settings()
    recorded = (prefect_home(settings) / "server.pid").exists()
    _prefect(["server", "stop"], settings, 60)
    return recorded
