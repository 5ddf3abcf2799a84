"""Fixtures for the flow tests."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from flows.localhost import free_port
from tests.fixtures.statutes import PENAL_CODE, WAGES_ACT

@pytest.fixture
def corpus(tmp_path):
    """A folder with two statute fixtures (``penal_code.txt``, ``wages_act.txt``) for the ingest flow tests."""
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "penal_code.txt").write_text(PENAL_CODE, encoding="utf-8")
    (d / "wages_act.txt").write_text(WAGES_ACT, encoding="utf-8")
    return d


# =========================================================================== deployments (orchestration)
# A real `prefect server start` on 127.0.0.1 with citebound's deployments and a process worker, for
# tests/flows/test_deployments.py. Module-scoped: one server + worker per module (~15-25 s to start).
# The Prefect test harness (`prefect_harness`) and the fakes (`fake_backends`) live in tests/conftest.py.

TOY_ACT = """THE TOY PROTECTION ACT, 2024 (test fixture, fictional wording)

1. Short title.—This Act may be called the Toy Protection Act, 2024, and it extends to the whole of India.

2. Punishment for breaking a toy.—Whoever wilfully breaks a toy belonging to another person shall be punished with a fine which may extend to five hundred rupees.
"""


@dataclass(frozen=True)
class DeployedStack:
    store_root: Path
    api_url: str
    source_dir: Path
    worker: subprocess.Popen


@pytest.fixture(scope="module")
def deployed_stack(tmp_path_factory) -> DeployedStack:
    """The user's server (a temporary user home, a free port) + `citebound-pool` + `prefect deploy --all` +
    a worker, for a fresh store; the worker is stopped with SIGINT and the server with `prefect server stop`."""
    from flows import deploy, server

    base = tmp_path_factory.mktemp("deployed")
    store_root = (base / "store").resolve()
    source_dir = base / "sources"
    source_dir.mkdir()
    (source_dir / "toy_act.txt").write_text(TOY_ACT, encoding="utf-8")
    # ensure_server honours an exported PREFECT_API_URL (a shared server): this stack must be its own.
    saved = {k: os.environ.get(k) for k in ("PREFECT_API_URL", "CITEBOUND_HOME", "CITEBOUND_USER_HOME",
                                            "CITEBOUND_PREFECT_PORT")}
    os.environ.pop("PREFECT_API_URL", None)
    os.environ["CITEBOUND_USER_HOME"] = str(base / "user")
    os.environ["CITEBOUND_PREFECT_PORT"] = str(free_port())
    worker = None
    try:
        api_url = server.ensure_server(store_root)
        deploy.ensure_work_pool(api_url)
        deploy.deploy_all(store_root, api_url, source_dir=source_dir)
        worker = deploy.start_worker(store_root, api_url, source_dir=source_dir)
        yield DeployedStack(store_root=store_root, api_url=api_url, source_dir=source_dir, worker=worker)
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGINT)
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        server.stop_server()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def background_prefect(tmp_path_factory):
    """The CLI's everyday mode for one module: the user's background Prefect server (a temporary user home
    and a free port, never a shared server from the environment), stopped and the variables restored after."""
    saved = {k: os.environ.get(k) for k in ("CITEBOUND_PREFECT", "PREFECT_API_URL", "CITEBOUND_USER_HOME",
                                            "CITEBOUND_PREFECT_PORT", "CITEBOUND_API_URL")}
    for key in saved:
        os.environ.pop(key, None)
    os.environ["CITEBOUND_PREFECT"] = "background"
    os.environ["CITEBOUND_USER_HOME"] = str(tmp_path_factory.mktemp("user-home"))
    os.environ["CITEBOUND_PREFECT_PORT"] = str(free_port())
    # No API on this address: `ask` runs in-process unless a test says otherwise.
    os.environ["CITEBOUND_API_URL"] = f"http://127.0.0.1:{free_port()}"
    try:
        yield
    finally:
        from flows.server import stop_server

        stop_server()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# =========================================================================== (flow fixtures below)
