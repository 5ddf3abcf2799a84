"""The background Prefect server: one per store, even when two processes ask for it at the same moment."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from flows.server import server_status, stop_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _start_server(store: str, results) -> None:  # noqa: ANN001 - runs in a child process
    os.environ.pop("PREFECT_API_URL", None)
    from flows.server import ensure_server

    results.put(ensure_server(Path(store)))


def test_two_processes_starting_a_server_for_a_fresh_store_share_one(tmp_path):
    store = tmp_path / "store"
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    children = [ctx.Process(target=_start_server, args=(str(store), results)) for _ in range(2)]
    for child in children:
        child.start()
    try:
        urls = [results.get(timeout=300) for _ in children]
        for child in children:
            child.join(timeout=60)
        # Without the start lock each process found no server and started its own, on its own port.
        assert urls[0] == urls[1]
        state = server_status(store)
        assert state is not None and state["healthy"] and state["api_url"] == urls[0]
    finally:
        stop_server(store)
    assert server_status(store) is None
