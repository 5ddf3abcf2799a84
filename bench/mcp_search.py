"""`search` over MCP against `POST /rag/query` retrieval-only: p50/p95 latency on the same questions, one run.

Builds a store from the demo's penal code (real MiniLM; or ``--store DIR`` holding documents of tenant
``default``), starts the real ``citebound api --no-auth`` on a free loopback port and the real ``citebound mcp``
(stdio), and asks each question once per path, one request at a time, the paths interleaved question by question
so that a load on the machine falls on all three alike: the REST route, the MCP ``search`` tool at ``/mcp`` of the
same API (the SDK's client, one connection), and ``search`` over stdio. Each request is made unique with trailing
white space (``bench/api.py``), so no retrieval is a stage-cache hit. Questions: ``bench/data/ipc_questions.jsonl``.
Everything it started is stopped at the end.

Usage: nice .venv/bin/python bench/mcp_search.py (not bench/mcp.py: that name would shadow the SDK) [--questions 40] [--store DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unique(question: str, n: int) -> str:
    return question + " " + format(n, "b").replace("0", " ").replace("1", "\t")


def _env(user_home: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CITEBOUND_USER_HOME": str(user_home),
           "CITEBOUND_PREFECT_PORT": str(_free_port()), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    return env


def _stats(name: str, ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=20)
    return f"{name:28s} {len(ms):5d} {statistics.median(ms):9.1f} {q[18]:9.1f}"


async def _measure(url: str, store: Path, env: dict[str, str], questions: list[str]) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    py = [sys.executable, "-m", "cli", "--store", str(store)]
    out: dict[str, list[float]] = {"POST /rag/query retrieval": [], "MCP search (HTTP /mcp)": [],
                                   "MCP search (stdio)": []}
    stdio = StdioServerParameters(command=py[0], args=[*py[1:], "mcp"], env=env, cwd=str(ROOT))
    async with httpx.AsyncClient(base_url=url, timeout=120) as rest, \
            Client(url + "/mcp", read_timeout_seconds=120) as over_http, \
            Client(stdio, read_timeout_seconds=300) as over_stdio:

        async def via_rest(q: str) -> None:
            r = await rest.post("/rag/query", json={"query": q, "mode": "retrieval_only"})
            r.raise_for_status()

        async def via(client) -> object:  # noqa: ANN001
            async def search(q: str) -> None:
                result = await client.call_tool("search", {"query": q})
                assert not result.is_error, result.content
            return search

        paths = {"POST /rag/query retrieval": via_rest, "MCP search (HTTP /mcp)": await via(over_http),
                 "MCP search (stdio)": await via(over_stdio)}
        n = 0
        for fn in paths.values():  # warm: the first request of each path pays no one-off cost in the figures
            n += 1
            await fn(_unique(questions[0], n))
        for question in questions:
            for name, fn in paths.items():
                n += 1  # every request its own: no path finds another's retrieval in the stage cache
                t0 = time.perf_counter()
                await fn(_unique(question, n))
                out[name].append((time.perf_counter() - t0) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--store", help="reuse a store (default: build one from samples/corpus/model_penal_code.pdf)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="citebound-bench-mcp-"))
    env = _env(tmp / "user")
    store = Path(args.store) if args.store else tmp / "store"
    py = [sys.executable, "-m", "cli", "--store", str(store)]
    api = None
    try:
        if not args.store:
            subprocess.run([*py, "ingest", str(ROOT / "samples" / "corpus" / "model_penal_code.pdf"), "--doc-code",
                            "IPC", "--no-ocr"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        api = subprocess.Popen([*py, "api", "--no-auth", "--port", str(port)], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while True:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if api.poll() is not None:
                raise SystemExit("citebound api exited at start-up")
            time.sleep(0.3)
        questions = [json.loads(line)["question"]
                     for line in (ROOT / "bench" / "data" / "ipc_questions.jsonl").read_text().splitlines()
                     if line][: args.questions]
        figures = anyio.run(_measure, url, store, env, questions)
        print(f"{'path':28s} {'n':>5s} {'p50 ms':>9s} {'p95 ms':>9s}")
        for name, ms in figures.items():
            print(_stats(name, ms))
        rest = statistics.median(figures["POST /rag/query retrieval"])
        for name in ("MCP search (HTTP /mcp)", "MCP search (stdio)"):
            print(f"{name}: p50 {statistics.median(figures[name]) / rest:.2f}x the REST route's")
    finally:
        if api is not None and api.poll() is None:
            api.terminate()
            api.wait(timeout=60)
        subprocess.run([*py, "server", "--stop"], env=env, cwd=ROOT, capture_output=True, timeout=180)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
