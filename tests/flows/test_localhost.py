"""The loopback helpers the local servers, tests and benches share (``flows/localhost.py``)."""

from __future__ import annotations

import socket

import pytest

from flows.localhost import free_port, wait_until

pytestmark = pytest.mark.unit


def test_wait_until_returns_what_the_condition_found_once_it_finds_it():
    calls = iter([None, 0, "", "found", "never asked"])
    assert wait_until(lambda: next(calls), 60, interval=0) == "found"
    assert next(calls) == "never asked", "no call after the first true answer"


def test_wait_until_out_of_time_returns_the_last_false_answer_after_one_call():
    calls: list[int] = []
    assert wait_until(lambda: calls.append(1) or None, 0) is None
    assert calls == [1]


def test_a_condition_that_raises_stops_the_wait():
    def exited() -> bool:
        raise RuntimeError("the server exited")

    with pytest.raises(RuntimeError, match="exited"):
        wait_until(exited, 60)


def test_free_port_is_a_loopback_port_a_server_can_listen_on():
    port = free_port()
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
