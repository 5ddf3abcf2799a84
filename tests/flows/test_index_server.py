"""The local milvus-lite server a test session or a bench starts: it listens on loopback, and it is gone when
its block ends, also when the block fails (no orphan process)."""

from __future__ import annotations

import os

import pytest

from flows.index_server import milvus_lite_server

pytestmark = [pytest.mark.integration]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is not alive either
        return stat.read().split()[2] != "Z"


def test_the_server_stops_when_its_block_fails(tmp_path):
    from pymilvus import MilvusClient

    with pytest.raises(RuntimeError, match="boom"), milvus_lite_server(tmp_path / "db") as server:
        pid = server.pid
        assert server.uri.startswith("http://127.0.0.1:") and _alive(pid)
        client = MilvusClient(uri=server.uri)
        assert client.get_server_version().startswith("milvus_lite")
        client.close()
        raise RuntimeError("boom")
    assert not _alive(pid)
