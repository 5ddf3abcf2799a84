"""The demo corpus for two tenants, and citebound's MCP server as real processes: `citebound mcp` over stdio and
`citebound api` (with keys) serving /mcp, each a subprocess stopped by the test that started it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.api.conftest import free_port
from tests.faults.conftest import MARK, kill_marked

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "samples" / "corpus"
NODE_BIN = ROOT / "tools" / "node" / "node_modules" / ".bin"
START_DEADLINE_S = 300.0
# Every process these tests start carries this mark in its environment, and so does anything those processes start
# (an API in ephemeral Prefect mode starts Prefect's own server, which outlives it: seen after this module's runs).
SESSION_MARK = f"mcp-{uuid.uuid4().hex}"


@pytest.fixture(scope="module", autouse=True)
def _nothing_left_behind() -> Iterator[None]:
    yield
    kill_marked(SESSION_MARK)
# Tenant a holds the penal code, tenant b the textbook chapter: what one sees, the other must not.
TENANT_DOCS = {"a": (CORPUS / "model_penal_code.pdf", "IPC"), "b": (CORPUS / "ncert_chapter.md", "NCERT")}


def env() -> dict[str, str]:
    out = {**os.environ, "PYTHONPATH": str(ROOT), "CITEBOUND_PREFECT": "ephemeral", MARK: SESSION_MARK}
    out.pop("PREFECT_API_URL", None)
    return out


def citebound(store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "cli", "--store", str(store), *args]


@pytest.fixture(scope="module")
def store(tmp_path_factory, prefect_harness) -> Path:
    """The demo's text PDF for tenant a and its textbook chapter for tenant b, ingested with the real MiniLM."""
    from flows.ingest_flow import ingest_flow

    root = tmp_path_factory.mktemp("mcp") / "store"
    for tenant, (path, code) in TENANT_DOCS.items():
        report = ingest_flow(paths=[str(path)], doc_code=code, tenant=tenant, store=str(root), ocr=False)
        assert all(f.status != "error" for f in report.files), report
    return root


@dataclass
class ApiProcess:
    proc: subprocess.Popen
    url: str
    keys: dict[str, str]
    store: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=60)


def add_key(store: Path, tenant: str) -> str:
    out = subprocess.run(citebound(store, "keys", "add", "--tenant", tenant), env=env(), cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True)
    return out.stdout.strip().splitlines()[-1]


def start_api(store: Path, *extra: str, keys: dict[str, str] | None = None) -> ApiProcess:
    port = free_port()
    proc = subprocess.Popen(citebound(store, "api", "--port", str(port), *extra), env=env(), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    api = ApiProcess(proc, f"http://127.0.0.1:{port}", keys or {}, store)
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"citebound api exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        try:
            if httpx.get(api.url + "/health", timeout=2).status_code == 200:
                return api
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    api.stop()
    raise AssertionError("citebound api did not answer /health in time")


@pytest.fixture(scope="module")
def keyed_api(store) -> Iterator[ApiProcess]:
    """`citebound api` over the store with one key per tenant."""
    keys = {tenant: add_key(store, tenant) for tenant in TENANT_DOCS}
    api = start_api(store, keys=keys)
    try:
        yield api
    finally:
        api.stop()


def node_tool(name: str) -> Path:
    """A Node CLI installed by `make install` (tools/node); skip, saying why, only where there is no node."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the outside MCP clients (tools/node) need it")
    path = NODE_BIN / name
    assert path.exists(), f"{path} missing: run `make install` (npm ci --prefix tools/node)"
    return path
