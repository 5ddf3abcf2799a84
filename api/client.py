"""The CLI's side of the HTTP API: find a running ``citebound api`` for a store and ask it (httpx).

``citebound ask`` / ``retrieve`` use the API at ``CITEBOUND_API_URL`` (default ``http://127.0.0.1:8000``)
when it is up *and* serves the same store (``GET /health`` names the store by ``store_id``); otherwise they
run in-process. ``CITEBOUND_API_KEY`` is sent when set (an API started without ``--no-auth`` needs it).
"""

from __future__ import annotations

from pathlib import Path

import httpx

from contracts import sha256_text
from contracts.errors import ConfigError

__all__ = ["store_id", "ApiClient", "api_for_store"]


def store_id(store_root: Path) -> str:
    """A store's name on the wire: a hash of its resolved path (the path itself is not shown)."""
    return sha256_text(str(Path(store_root).resolve()))[:16]


class ApiClient:
    def __init__(self, url: str, key: str | None = None, timeout: float = 300.0) -> None:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def query(self, body: dict) -> dict:
        try:
            resp = self.http.post("/rag/query", json=body)
        except httpx.HTTPError as exc:
            raise ConfigError(f"the citebound API did not answer: {type(exc).__name__}: {exc}") from exc
        if resp.status_code != 200:
            try:
                err = resp.json()
                detail = f"{err.get('error')}: {err.get('detail')}"
            except ValueError:
                detail = resp.text[:300]
            raise ConfigError(f"the citebound API refused the request ({resp.status_code} {detail})")
        return resp.json()


def api_for_store(store_root: Path, url: str, key: str | None) -> ApiClient | None:
    """A client for the API at ``url`` if one is up for this store, else None (never raises)."""
    try:
        health = httpx.get(f"{url.rstrip('/')}/health", timeout=0.5).json()
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(health, dict) or health.get("store_id") != store_id(store_root):
        return None
    return ApiClient(url, key)
