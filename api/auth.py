"""Who is calling: an ``Authenticator`` turns the Authorization header into a ``Caller`` (one tenant) or an
error triple (status, error, detail). ``OpenAuthenticator`` is the keyless local mode (``citebound api
--no-auth``, loopback only): every caller is the ``default`` tenant unless the request names another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Caller", "Authenticator", "OpenAuthenticator"]


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
