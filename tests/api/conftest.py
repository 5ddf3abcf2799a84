"""A real uvicorn server on 127.0.0.1 (a free port) serving the API over a store ingested with the hash
embedder; it runs in a thread of the test process so the registered fakes and the Prefect test harness
are the ones it uses, and it is stopped after the module."""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from flows.localhost import free_port, wait_until
from tests.fixtures.statutes import PENAL_CODE, WAGES_ACT


@dataclass
class RunningApi:
    url: str
    store_root: Path
    app: object

    def client(self, key: str | None = None, **kw: object) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120.0, **kw)


def serve(app, port: int) -> Callable[[], None]:  # noqa: ANN001
    """Start uvicorn for ``app`` in a thread (carrying this context: Prefect's test settings); return stop()."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    ctx = contextvars.copy_context()
    thread = threading.Thread(target=ctx.run, args=(server.run,), daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), 30, interval=0.05)
    if not server.started:
        raise RuntimeError("uvicorn did not start")

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=30)

    return stop


def ingest_fixtures(root: Path, source_dir: Path, tenant: str = "default", index_uri: str | None = None) -> None:
    from flows.ingest_flow import ingest_flow

    source_dir.mkdir(parents=True, exist_ok=True)
    (source_dir / "penal_code.txt").write_text(PENAL_CODE, encoding="utf-8")
    (source_dir / "wages_act.txt").write_text(WAGES_ACT, encoding="utf-8")
    ingest_flow(paths=[str(source_dir / "penal_code.txt")], doc_code="IPC", tenant=tenant, store=str(root),
                embedder="hash", index_uri=index_uri or "faiss")
    ingest_flow(paths=[str(source_dir / "wages_act.txt")], doc_code="WagesAct", tenant=tenant, store=str(root),
                embedder="hash", index_uri=index_uri or "faiss")


@pytest.fixture(scope="module")
def module_backends():
    """The hash embedder and the lenient verifier for a module's server (the function-scoped `fake_backends`
    ends with each test)."""
    from flows import backends
    from tests.fakes import HashEmbedder, WordOverlapVerifier

    backends.register_embedder("hash", lambda: HashEmbedder(dim=64))
    backends.register_verifier("lenient", lambda: WordOverlapVerifier({"": 0.9}, name="lenient"))
    before = os.environ.get("CITEBOUND_VERIFIER")
    os.environ["CITEBOUND_VERIFIER"] = "lenient"
    yield
    if before is None:
        os.environ.pop("CITEBOUND_VERIFIER", None)
    else:
        os.environ["CITEBOUND_VERIFIER"] = before
    backends._embedder_factories.pop("hash", None)
    backends._embedders.pop("hash", None)
    backends._verifier_factories.pop("lenient", None)
    backends._verifiers.pop("lenient", None)


def start_api(root: Path, **cfg_kw: object) -> Iterator[RunningApi]:
    from api.app import ApiConfig, create_app

    app = create_app(ApiConfig(store_root=root, embedder="hash", **cfg_kw))
    port = free_port()
    stop = serve(app, port)
    try:
        yield RunningApi(url=f"http://127.0.0.1:{port}", store_root=root, app=app)
    finally:
        stop()


def start_keyed_api(root: Path, *tenants: str, **cfg_kw: object) -> Iterator[tuple[RunningApi, tuple[str, ...], object]]:
    """The API over ``root`` with a migrated database and one new key per tenant (in order); closed after."""
    from api.db import Database, default_url

    db = Database(default_url(root))
    db.migrate()
    keys = tuple(db.add_key(tenant)[1] for tenant in tenants)
    try:
        for api in start_api(root, db=db, **cfg_kw):
            yield api, keys, db
    finally:
        db.close()
