"""Calls to a Milvus server that outlive an idle connection and a dropped one, and never send a write twice.

Keepalive. pymilvus 3.0.2 opens its gRPC channel with ``grpc.keepalive_time_ms`` 10000 and
``grpc.keepalive_permit_without_calls`` on: it pings every 10 s, with a call open or not. A gRPC server on its
defaults (milvus-lite's Python server; grpc-go's enforcement policy alike) accepts one ping per 5 minutes when no
data flows and none at all without an open call; the third ping it counts against the client is answered with
GOAWAY ``ENHANCE_YOUR_CALM`` ("too_many_pings") and the connection is closed, failing whatever call is on it with
``UNAVAILABLE``. An idle connection meets that after about 30 s. ``GRPC_OPTIONS`` ping at most every 5 minutes
and only while a call is open, which such a server accepts; a dead peer is still found, by the ping of a long
call or by the next call's error.

Reconnects. ``MilvusCalls`` stands where a ``MilvusClient`` would (``flows.index_backends.milvus_client``), each
client its own channel (``dedicated``: pymilvus shares one channel per address and token, whatever its options).
A call that meets ``UNAVAILABLE`` (or a connection pymilvus cannot re-open) drops the client; the next attempt
opens a new one. Reads, and the writes whose repeat changes nothing (``upsert`` of rows keyed by their primary
key, ``delete`` by a filter, ``flush``, loading a collection), are sent again, ``ATTEMPTS`` times in all with a
growing pause (tenacity), then raise ``IndexUnavailableError``. Any other call (creating or dropping a
collection, an ``insert``) is sent once: on a dropped connection it may or may not have been applied, so it
raises ``IndexUnavailableError`` saying so, and the next call reconnects. pymilvus's own retry loop (75 tries,
any call, a write included) is turned off per call (``retry_times=0``), so the policy here is the only one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from contracts.errors import IndexUnavailableError

__all__ = ["MilvusCalls", "GRPC_OPTIONS", "ATTEMPTS", "RESENDABLE", "is_unavailable"]

GRPC_OPTIONS: dict[str, int] = {
    "grpc.keepalive_time_ms": 300_000,
    "grpc.keepalive_timeout_ms": 20_000,
    "grpc.keepalive_permit_without_calls": 0,
    "grpc.http2.max_pings_without_data": 2,
}
ATTEMPTS = 4
RESENDABLE = frozenset({
    "has_collection", "describe_collection", "describe_index", "list_collections", "get_load_state",
    "load_collection", "query", "query_iterator", "search", "hybrid_search", "get_server_version",
    "upsert", "delete", "flush",
})
"""Calls sent again after a dropped connection: reads, and writes whose repeat changes nothing."""
_LOCAL = frozenset({"prepare_index_params", "create_schema"})  # built in the client, no call to the server
_NO_RETRY_KWARG = frozenset({"query_iterator"})  # takes no ``retry_times``


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says the connection to the server is gone: gRPC ``UNAVAILABLE``, or
    pymilvus failing to (re)connect."""
    import grpc

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, grpc.RpcError) and callable(getattr(current, "code", None)):
            if current.code() == grpc.StatusCode.UNAVAILABLE:
                return True
        code = getattr(current, "code", None)
        if code == grpc.StatusCode.UNAVAILABLE or "Fail connecting to server" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


class MilvusCalls:
    """A ``MilvusClient`` stand-in over ``connect()`` (see the module docstring)."""

    def __init__(self, connect: Callable[[], Any], *, location: str = "", attempts: int = ATTEMPTS,
                 wait: Any = None) -> None:
        self._connect = connect
        self.location = location
        self._attempts = attempts
        self._wait = wait if wait is not None else wait_exponential(multiplier=0.25, max=2)
        self._lock = threading.Lock()
        self._client: Any = None
        self.reconnects = 0

    def _current(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _drop(self, client: Any) -> None:
        with self._lock:
            if self._client is not client:
                return  # another thread already replaced it
            self._client = None
            self.reconnects += 1
        try:
            client.close()
        except Exception:  # noqa: BLE001 - a broken channel may refuse to close; it is abandoned either way
            pass

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _LOCAL:
            return getattr(self._current(), name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._call(name, args, kwargs)

        call.__name__ = name
        return call

    def _once(self, name: str, args: tuple, kwargs: dict) -> Any:
        try:
            client = self._current()
        except Exception as exc:
            if is_unavailable(exc):
                raise _Unavailable(exc) from exc
            raise
        if name not in _NO_RETRY_KWARG:
            kwargs = {**kwargs, "retry_times": 0}
        try:
            return getattr(client, name)(*args, **kwargs)
        except Exception as exc:
            if is_unavailable(exc):
                self._drop(client)
                raise _Unavailable(exc) from exc
            raise

    def _call(self, name: str, args: tuple, kwargs: dict) -> Any:
        where = self.location or "the Milvus server"
        if name not in RESENDABLE:
            try:
                return self._once(name, args, kwargs)
            except _Unavailable as exc:
                raise IndexUnavailableError(
                    f"{name} on {where}: the connection dropped ({_reason(exc.cause)}); it was sent once and not "
                    "again, as it may or may not have been applied: check, then retry") from exc.cause
        retrying = Retrying(stop=stop_after_attempt(self._attempts), wait=self._wait,
                            retry=retry_if_exception(lambda e: isinstance(e, _Unavailable)), reraise=True)
        try:
            return retrying(self._once, name, args, kwargs)
        except _Unavailable as exc:
            raise IndexUnavailableError(
                f"{name} on {where}: the server is unavailable after {self._attempts} attempts "
                f"({_reason(exc.cause)})") from exc.cause


class _Unavailable(Exception):
    """One attempt met a dropped connection (internal: becomes ``IndexUnavailableError``)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _reason(exc: BaseException) -> str:
    details = getattr(exc, "details", None)
    text = details() if callable(details) else str(exc)
    text = " ".join(str(text).split())
    return text if len(text) <= 160 else text[:157] + "..."
