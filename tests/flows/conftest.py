"""Fixtures for the flow tests."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

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
    worker_pid: int


@pytest.fixture(scope="module")
def deployed_stack(tmp_path_factory) -> DeployedStack:
    """Server + `citebound-pool` + `prefect deploy --all` + worker, for a fresh store; stopped with SIGINT after."""
    from flows import deploy, server

    base = tmp_path_factory.mktemp("deployed")
    store_root = (base / "store").resolve()
    source_dir = base / "sources"
    source_dir.mkdir()
    (source_dir / "toy_act.txt").write_text(TOY_ACT, encoding="utf-8")
    # ensure_server honours an exported PREFECT_API_URL (a shared server): this stack must be its own.
    saved = {k: os.environ.get(k) for k in ("PREFECT_API_URL", "CITEBOUND_HOME")}
    os.environ.pop("PREFECT_API_URL", None)
    try:
        api_url = server.ensure_server(store_root)
        deploy.ensure_work_pool(api_url)
        deploy.deploy_all(store_root, api_url, source_dir=source_dir)
        pid = deploy.start_worker(store_root, api_url, source_dir=source_dir)
        yield DeployedStack(store_root=store_root, api_url=api_url, source_dir=source_dir, worker_pid=pid)
    finally:
        server.stop_server(store_root)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def background_prefect():
    """The CLI's everyday mode for one module: a background Prefect server per store and the warm answer
    service, never a shared server from the environment; the variables are restored afterwards."""
    saved = {k: os.environ.get(k) for k in ("CITEBOUND_PREFECT", "PREFECT_API_URL", "CITEBOUND_SERVICE")}
    for key in saved:
        os.environ.pop(key, None)
    os.environ["CITEBOUND_PREFECT"] = "background"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# =========================================================================== (flow fixtures below)
