"""The HTTP API under load: requests/s and p50/p95 latency with 8 concurrent clients, then the idle footprint.

Builds a store from the IPC (``indian-acts-json/ipc.json``, real MiniLM), starts the real ``citebound api
--no-auth`` on a free loopback port (with a temporary user home, so its Prefect server is its own), and for
``retrieval_only`` then ``answer`` (extractive) runs ``--clients`` threads that post questions from
``bench/data/ipc_questions.jsonl`` for ``--seconds`` each. With ``--repeat`` the questions cycle as they are,
so after the first pass a request finds its stages in the store's cache (the share is reported as
"repeated"); by default each request is made unique with trailing white space that spells its number (a visible
suffix such as "(#12)" would be a detail of the question, which the alignment check rightly refuses as missing
from the evidence), so every one is computed. Then it
measures the processes left running (the API and the user's Prefect server): count, RSS and CPU over
``--idle-seconds``. Everything it started is stopped at the end.

Usage: nice .venv/bin/python bench/api.py [--clients 8] [--seconds 20] [--idle-seconds 60] [--store DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from flows.localhost import free_port, wait_until

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data"))



def _unique_suffix(n: int) -> str:
    """White space that differs for every request number: the request's address changes, its meaning does not."""
    return " " + format(n, "b").replace("0", " ").replace("1", "\t")


def _env(user_home: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "CITEBOUND_USER_HOME": str(user_home),
            "CITEBOUND_PREFECT_PORT": str(free_port()), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"}


def _load(url: str, mode: str, questions: list[str], clients: int, seconds: float, repeat: bool) -> dict[str, float]:
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    errors = 0
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    sent = [0]

    def client(i: int) -> None:
        nonlocal errors
        with httpx.Client(base_url=url, timeout=120) as c:
            j = i
            while time.monotonic() < stop_at:
                q = questions[j % len(questions)] + ("" if repeat else _unique_suffix(j))
                j += clients
                t0 = time.perf_counter()
                r = c.post("/rag/query", json={"query": q, "mode": mode})
                took = time.perf_counter() - t0
                with lock:
                    sent[0] += 1
                    if r.status_code != 200:
                        errors += 1
                        continue
                    latencies.append(took)
                    body = r.json()
                    key = body.get("status", "results")
                    statuses[key] = statuses.get(key, 0) + 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    lat = sorted(latencies)
    return {"requests": len(lat), "errors": errors, "rps": len(lat) / wall,
            "p50_ms": 1000 * statistics.median(lat) if lat else float("nan"),
            "p95_ms": 1000 * lat[int(0.95 * (len(lat) - 1))] if lat else float("nan"),
            "repeated": max(0, len(lat) - len(questions)) / max(1, len(lat)) if repeat else 0.0,
            "statuses": statuses}


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout.split("\n")
    children: dict[int, list[int]] = {}
    for line in out:
        if line.strip():
            p, pp = map(int, line.split())
            children.setdefault(pp, []).append(p)
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def _rss_and_ticks(pids: list[int]) -> tuple[int, int]:
    rss = ticks = 0
    for pid in pids:
        try:
            rss += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return rss, ticks


def _server_pids(user_home: Path) -> list[int]:
    pid_file = user_home / "prefect" / "server.pid"
    return [int(pid_file.read_text())] if pid_file.exists() else []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--idle-seconds", type=float, default=60.0)
    ap.add_argument("--store", help="reuse a store holding the IPC (default: build one in a temp folder)")
    ap.add_argument("--repeat", action="store_true", help="cycle the questions unchanged (stage-cache hits)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="citebound-bench-api-"))
    user_home = tmp / "user"
    env = _env(user_home)
    store = Path(args.store) if args.store else tmp / "store"
    py = [sys.executable, "-m", "cli", "--store", str(store)]
    api = None
    try:
        if not args.store:
            t0 = time.perf_counter()
            subprocess.run([*py, "ingest", str(SHARED / "indian-acts-json" / "ipc.json"), "--doc-code", "IPC"],
                           env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            print(f"ingested the IPC in {time.perf_counter() - t0:.1f} s")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        t0 = time.perf_counter()
        api = subprocess.Popen([*py, "api", "--no-auth", "--port", str(port)], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def up() -> bool:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            if api.poll() is not None:
                raise SystemExit("citebound api exited at start-up")
            return False

        wait_until(up, float("inf"), interval=0.3)
        print(f"citebound api up in {time.perf_counter() - t0:.1f} s (model, index and Prefect server warm)")
        questions = [json.loads(line)["question"]
                     for line in (ROOT / "bench" / "data" / "ipc_questions.jsonl").read_text().splitlines() if line]
        # One request per mode first, so neither measurement carries a first-request cost.
        for mode in ("retrieval_only", "answer"):
            httpx.post(url + "/rag/query", json={"query": questions[0], "mode": mode}, timeout=120)
        print(f"{'mode':15s} {'clients':>7s} {'requests':>8s} {'req/s':>7s} {'p50 ms':>8s} {'p95 ms':>8s}  "
              f"{'repeated':>8s}  outcomes")
        for mode in ("retrieval_only", "answer"):
            r = _load(url, mode, questions, args.clients, args.seconds, args.repeat)
            print(f"{mode:15s} {args.clients:7d} {r['requests']:8d} {r['rps']:7.1f} {r['p50_ms']:8.0f} "
                  f"{r['p95_ms']:8.0f}  {r['repeated']:8.0%}  {r['statuses']} errors={r['errors']}")
        pids = _descendants(api.pid) + _server_pids(user_home)
        rss0, ticks0 = _rss_and_ticks(pids)
        time.sleep(args.idle_seconds)
        rss1, ticks1 = _rss_and_ticks(pids)
        cpu = (ticks1 - ticks0) / os.sysconf("SC_CLK_TCK") / args.idle_seconds
        print(f"idle after the bench: {len(pids)} processes (API + the user's Prefect server), "
              f"RSS {rss1 / 2**20:.0f} MB, CPU {cpu:.1%} of a core over {args.idle_seconds:.0f} s")
    finally:
        if api is not None and api.poll() is None:
            api.send_signal(signal.SIGINT)
            try:
                api.wait(timeout=30)
            except subprocess.TimeoutExpired:
                api.kill()
        subprocess.run([*py, "server", "--stop"], env=env, cwd=ROOT, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
