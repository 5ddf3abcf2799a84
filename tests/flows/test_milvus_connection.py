"""The Milvus connection against a real ``milvus-lite server`` (its own, on loopback, stopped by its block): an
idle connection is kept past the server's ping window, and a server that went away and came back is reached
again on reads, while a write that is not safe to repeat is never sent twice (``stages.adapters.milvus_calls``).
"""

from __future__ import annotations

import os
import time

import grpc
import psutil
import pytest

from contracts.errors import IndexUnavailableError
from flows.index_backends import clear_index_caches, milvus_client
from flows.index_server import free_port, milvus_lite_server
from stages.adapters.milvus_calls import ATTEMPTS, MilvusCalls

# The server's default policy answers the third ping it counts on an idle connection with GOAWAY; pymilvus's
# own channel pings every 10 s, so the connection was closed after about 30 s. Held idle well past that.
IDLE_SECONDS = 45


def _connections_to(port: int) -> set[tuple[int, str]]:
    """This process's TCP connections to 127.0.0.1:``port``: (local port, state)."""
    return {(c.laddr.port, c.status) for c in psutil.Process(os.getpid()).net_connections(kind="tcp")
            if c.raddr and c.raddr.port == port}


@pytest.mark.integration
def test_an_idle_connection_is_kept_past_the_servers_ping_window(tmp_path):
    port = free_port()
    with milvus_lite_server(tmp_path / "db", port=port) as server:
        try:
            client = milvus_client(server.uri)
            assert client.has_collection("nothing_here") is False
            before = _connections_to(port)
            assert len(before) == 1 and {s for _, s in before} == {"ESTABLISHED"}, before
            time.sleep(IDLE_SECONDS)  # the scenario, not an assertion: no call while the server counts pings
            # Still the same connection: the server did not close it (GOAWAY "too_many_pings").
            assert _connections_to(port) == before
            assert client.has_collection("nothing_here") is False
            assert _connections_to(port) == before, "the call needed a new connection"
        finally:
            clear_index_caches()


@pytest.mark.integration
def test_reads_reach_a_server_that_came_back_and_a_create_is_not_sent_again(tmp_path):
    port = free_port()
    client = None
    try:
        with milvus_lite_server(tmp_path / "db", port=port) as server:
            uri = server.uri
            client = milvus_client(uri)
            client.create_collection("kept", dimension=4)
            assert client.has_collection("kept") is True
        # The server is gone: a read is tried ATTEMPTS times, then a typed error (never a gRPC traceback).
        with pytest.raises(IndexUnavailableError, match=f"after {ATTEMPTS} attempts"):
            client.has_collection("kept")
        # Creating a collection is sent once: the error says it was not sent again.
        with pytest.raises(IndexUnavailableError, match="not again"):
            client.create_collection("other", dimension=4)
        with milvus_lite_server(tmp_path / "db", port=port):
            # The same client object reaches the server that came back (a new connection, opened by the read).
            assert client.has_collection("kept") in (True, False)
            client.create_collection("again", dimension=4)
            assert client.has_collection("again") is True
    finally:
        clear_index_caches()
        if client is not None:
            client.close()


class _Unavailable(grpc.RpcError):
    def code(self):  # noqa: ANN202
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "Too many pings"


class _DroppingClient:
    """A client whose every call meets a dropped connection; counts what was sent."""

    def __init__(self, sent: list[str]) -> None:
        self.sent = sent

    def __getattr__(self, name: str):  # noqa: ANN204
        def call(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            assert kwargs.get("retry_times") == 0, "pymilvus's own retry loop must be off"
            self.sent.append(name)
            raise _Unavailable()
        return call

    def close(self) -> None:
        pass


@pytest.mark.unit
def test_an_upsert_is_resent_a_bounded_number_of_times_and_an_insert_never():
    sent: list[str] = []
    connects: list[int] = []

    def connect() -> _DroppingClient:
        connects.append(1)
        return _DroppingClient(sent)

    calls = MilvusCalls(connect, location="http://127.0.0.1:1", wait=lambda _state: 0)
    with pytest.raises(IndexUnavailableError, match="Too many pings"):
        calls.upsert("c", [{"key": 1}])
    assert sent == ["upsert"] * ATTEMPTS and len(connects) == ATTEMPTS  # a new connection per attempt
    sent.clear()
    with pytest.raises(IndexUnavailableError, match="sent once and not again"):
        calls.insert("c", [{"key": 1}])
    assert sent == ["insert"]
    sent.clear()
    with pytest.raises(IndexUnavailableError):
        calls.drop_collection("c")
    assert sent == ["drop_collection"]
