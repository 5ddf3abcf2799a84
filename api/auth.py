"""Who is calling: an ``Authenticator`` turns the Authorization header into a ``Caller`` (one tenant) or an
error triple (status, error, detail). ``OpenAuthenticator`` is the keyless local mode (``citebound api
--no-auth``, loopback only): every caller is the ``default`` tenant unless the request names another."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from api.db import Database

__all__ = ["Caller", "Authenticator", "OpenAuthenticator", "KeyAuthenticator", "RateLimiter"]


@dataclass(frozen=True)
class Caller:
    tenant: str
    key_id: str | None = None
    # Keyless local mode: the request may name its tenant.
    open: bool = False


class Authenticator(Protocol):
    def authenticate(self, authorization: str | None, *, path: str) -> Caller | tuple[int, str, str]: ...


class OpenAuthenticator:
    def authenticate(self, authorization: str | None, *, path: str) -> Caller:
        return Caller(tenant="default", open=True)


class RateLimiter:
    """Per-key token bucket: ``per_minute`` requests a minute, bursts up to ``burst``."""

    def __init__(self, per_minute: float, burst: int | None = None) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst or max(1, int(per_minute)))
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key_id: str) -> bool:
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key_id, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                return False
            self._buckets[key_id] = (tokens - 1.0, now)
            return True


class KeyAuthenticator:
    """``Authorization: Bearer <key>`` checked against the database; one tenant per key; rate limited per key."""

    def __init__(self, db: Database, limiter: RateLimiter | None = None) -> None:
        self.db = db
        self.limiter = limiter

    def authenticate(self, authorization: str | None, *, path: str) -> Caller | tuple[int, str, str]:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return 401, "unauthorized", "send Authorization: Bearer <key>"
        found = self.db.tenant_of_key(token.strip())
        if found is None:
            # One answer for unknown, wrong and revoked keys.
            return 403, "forbidden", "this key is not valid"
        tenant, key_id = found
        if self.limiter is not None and not self.limiter.allow(key_id):
            return 429, "rate_limited", "too many requests for this key; retry shortly"
        return Caller(tenant=tenant, key_id=key_id)
