"""`citebound api` as a real command: a process on 127.0.0.1 that needs keys unless --no-auth, made with
`citebound keys add`, stops on SIGINT, and leaves only the user's Prefect server (stopped by `server --stop`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from flows.localhost import free_port, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def test_the_api_command_serves_with_keys_and_stops_cleanly(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CITEBOUND_USER_HOME": str(tmp_path / "user"),
           "CITEBOUND_PREFECT_PORT": str(free_port()), "CITEBOUND_PREFECT": "background"}
    env.pop("PREFECT_API_URL", None)
    store = tmp_path / "store"
    cli = [sys.executable, "-m", "cli", "--store", str(store)]
    added = subprocess.run([*cli, "keys", "add", "--tenant", "acme"], env=env, cwd=ROOT, capture_output=True,
                           text=True, check=True)
    key = added.stdout.strip().splitlines()[-1]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    api = subprocess.Popen([*cli, "api", "--port", str(port)], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    try:

        def up_or_exited() -> bool:
            if api.poll() is not None:
                return True
            try:
                return httpx.get(url + "/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up_or_exited, 300, interval=0.3)
        assert api.poll() is None, api.stderr.read() if api.stderr else ""
        assert httpx.get(url + "/documents").status_code == 401
        ok = httpx.get(url + "/documents", headers={"authorization": f"Bearer {key}"})
        assert ok.status_code == 200 and ok.json() == {"documents": []}
        empty = httpx.post(url + "/rag/query", headers={"authorization": f"Bearer {key}"},
                           json={"query": "What is theft?"}, timeout=120)
        assert empty.status_code == 200 and empty.json()["status"] != "success"  # nothing ingested: a refusal
        assert "/rag/query" in httpx.get(url + "/openapi.json").json()["paths"]
    finally:
        api.send_signal(signal.SIGINT)
        code = api.wait(timeout=60)
        subprocess.run([*cli, "server", "--stop"], env=env, cwd=ROOT, capture_output=True, timeout=120)
    assert code == 0
    with pytest.raises(httpx.HTTPError):
        httpx.get(url + "/health", timeout=1)
