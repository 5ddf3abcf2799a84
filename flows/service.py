"""The warm answer service: one resident process per store that keeps Prefect, torch and the model loaded.

``citebound ask`` in a fresh process pays ~4 s of imports (sentence-transformers, torch) before it can embed
a question (bench/cli.py). Instead, the CLI forwards questions to this service, started in the background on
first use and reused after: the same ``answer_flow`` runs here, warm, in ~0.2 s. It listens on 127.0.0.1
only, requires the token written (mode 0600) into ``<store>/prefect/service.json``, serialises answer runs,
and exits by itself after ``CITEBOUND_SERVICE_IDLE`` seconds without a request (default 1800), or
within a second of its store's ``prefect`` folder being deleted.

The service answers with the settings of the environment it was started from. So that a question asked with
other settings (``CITEBOUND_MIN_CONFIDENCE=0.7``, another ``CITEBOUND_LLM`` or ``OPENAI_BASE_URL``) is never
answered under the old ones, the service records a fingerprint of those variables and ``ensure_service``
replaces a service whose fingerprint differs from the caller's. Likewise for the code: a service started
before citebound's Python files changed (``code_fingerprint``) is replaced, not reused.

This is also the seed of the HTTP API on the roadmap (``/rag/query``); today it has two routes:
``GET /health`` and ``POST /ask`` (JSON: question, tenant, project, top_k, llm, llm_model, overrides -> Answer
JSON; ``overrides`` are ``--set`` pairs).
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from contracts.errors import ConfigError

__all__ = ["ensure_service", "ask_service", "stop_service", "service_state_path", "settings_fingerprint",
           "code_fingerprint", "main"]

_ASK_FIELDS = ("question", "tenant", "project", "top_k", "llm", "llm_model", "overrides")


# Variables that change answers: citebound's own settings and the openai client's. Not the ones that only
# steer the service itself or that the service sets for its own process.
_ANSWER_ENV_PREFIXES = ("CITEBOUND_", "OPENAI_")
_SERVICE_ONLY_ENV = frozenset({"CITEBOUND_SERVICE", "CITEBOUND_SERVICE_IDLE", "CITEBOUND_HOME",
                               "CITEBOUND_PREFECT", "CITEBOUND_QUERY_THREADS"})


def settings_fingerprint(environ: dict[str, str] | os._Environ[str]) -> str:
    """sha256 over the answer-relevant environment variables (names and values, sorted).

    >>> assert settings_fingerprint({"CITEBOUND_MIN_CONFIDENCE": "0.7"}) != settings_fingerprint({})
    >>> assert settings_fingerprint({"CITEBOUND_SERVICE_IDLE": "5", "PATH": "/bin"}) == settings_fingerprint({})
    """
    import hashlib

    items = sorted((k, v) for k, v in environ.items()
                   if k.startswith(_ANSWER_ENV_PREFIXES) and k not in _SERVICE_ONLY_ENV)
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()


_CODE_PACKAGES = ("contracts", "stages", "flows")


def code_fingerprint(root: Path | None = None) -> str:
    """sha256 over (path, size, mtime) of citebound's Python files: changes when the code is updated.

    A service started before a ``git pull`` or an edit would otherwise go on answering with the old stages
    for up to ``CITEBOUND_SERVICE_IDLE`` seconds. Metadata, not contents: ~60 ``stat`` calls per ``ask``.

    >>> assert code_fingerprint() == code_fingerprint() and len(code_fingerprint()) == 64
    """
    import hashlib

    root = root or Path(__file__).resolve().parent.parent
    entries = []
    for package in _CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            st = path.stat()
            entries.append((str(path.relative_to(root)), st.st_size, st.st_mtime_ns))
    return hashlib.sha256(json.dumps(entries).encode()).hexdigest()


def service_state_path(store_root: Path) -> Path:
    return Path(store_root) / "prefect" / "service.json"


def _read_state(store_root: Path) -> dict | None:
    from flows.server import read_process_state

    return read_process_state(service_state_path(store_root))


def _request(state: dict, method: str, path: str, body: dict | None = None, timeout: float = 300.0) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        f"http://127.0.0.1:{state['port']}{path}", data=data, method=method,
        headers={"content-type": "application/json", "x-citebound-token": state["token"]},
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def _healthy(state: dict | None) -> bool:
    if not state or not state.get("alive"):
        return False
    try:
        return _request(state, "GET", "/health", timeout=2.0).get("ok") is True
    except (urllib.error.URLError, OSError, ValueError, KeyError):
        return False


def ensure_service(store_root: Path, *, timeout: float = 240.0) -> dict:
    """The state of a healthy answer service for this store, starting one (and the Prefect server) if needed."""
    from contracts.store import ArtifactStore

    store_root = Path(store_root).resolve()
    # One service per store even when several `ask`s start at once: the second waits here, then reuses.
    with ArtifactStore(store_root).lock("answer-service"):
        return _ensure_service_locked(store_root, timeout)


def _ensure_service_locked(store_root: Path, timeout: float) -> dict:
    state = _read_state(store_root)
    if _healthy(state):
        same_settings = state.get("settings") == settings_fingerprint(os.environ)  # type: ignore[union-attr]
        same_code = state.get("code") == code_fingerprint()  # type: ignore[union-attr]
        if same_settings and same_code:
            return state  # type: ignore[return-value]
        # Started under other settings or from older code: replace it rather than answer with the old ones.
        why = "other settings" if not same_settings else "code that has changed since"
        print(f"(citebound's answer service was started with {why}; restarting it)", file=sys.stderr)
        stop_service(store_root)
    log_path = store_root / "prefect" / "service.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "flows.service", "--store", str(store_root)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            cwd=Path(__file__).resolve().parent.parent,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ConfigError(f"the answer service exited at start-up (code {proc.returncode}); see {log_path}")
        state = _read_state(store_root)
        if state and state.get("pid") == proc.pid and _healthy(state):
            return state
        time.sleep(0.2)
    proc.terminate()
    raise ConfigError(f"the answer service did not become healthy within {timeout:.0f} s; see {log_path}")


def ask_service(state: dict, **question: object) -> dict:
    """Answer JSON for one question from a running service."""
    try:
        return _request(state, "POST", "/ask", {k: question.get(k) for k in _ASK_FIELDS})
    except urllib.error.HTTPError as exc:
        raise ConfigError(f"the answer service refused the request: {exc.code} {exc.read()[:300]!r}") from exc


def stop_service(store_root: Path) -> bool:
    from flows.server import stop_recorded_process

    return stop_recorded_process(service_state_path(store_root))


class _Handler(BaseHTTPRequestHandler):
    server: _Service

    def log_message(self, fmt: str, *args: object) -> None:  # quiet: answers are in the store's run records
        pass

    def _reply(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        given = self.headers.get("x-citebound-token", "")
        if hmac.compare_digest(given, self.server.token):
            return True
        self._reply(403, {"error": "bad or missing token"})
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if not self._authorised():
            return
        if self.path == "/health":
            self._reply(200, {"ok": True, "store": str(self.server.store_root), "pid": os.getpid()})
        else:
            self._reply(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        if not self._authorised():
            return
        if self.path != "/ask":
            self._reply(404, {"error": "not found"})
            return
        try:
            length = min(int(self.headers.get("content-length", "0")), 1_000_000)
            body = json.loads(self.rfile.read(length) or b"{}")
            question = str(body.get("question") or "").strip()
            if not question:
                raise ValueError("question is required")
            overrides = body.get("overrides") or {}
            if not isinstance(overrides, dict) or not all(isinstance(v, str) for v in overrides.values()):
                raise ValueError("overrides must be an object of strings")
        except (ValueError, TypeError) as exc:
            self._reply(400, {"error": str(exc)})
            return
        self.server.touch()
        answer = self.server.answer(question, body)
        self._reply(200, json.loads(answer.model_dump_json()))


class _Service(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, store_root: Path, token: str, idle_seconds: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.store_root = store_root
        self.token = token
        self.idle_seconds = idle_seconds
        self._last = time.monotonic()
        # One answer run at a time: Prefect's run context and the SQLite-backed server prefer it, and two
        # runs would only compete for the same 2 cores.
        self._lock = threading.Lock()

    def touch(self) -> None:
        self._last = time.monotonic()

    def idle(self) -> bool:
        return time.monotonic() - self._last > self.idle_seconds

    def answer(self, question: str, body: dict):  # noqa: ANN201
        from flows.answer_flow import answer_flow

        top_k = body.get("top_k")
        with self._lock:
            return answer_flow(
                question=question, tenant=str(body.get("tenant") or "default"),
                project=str(body.get("project") or "default"), top_k=int(top_k) if top_k else None,
                llm=body.get("llm") or None, llm_model=body.get("llm_model") or None, store=str(self.store_root),
                overrides={str(k): str(v) for k, v in (body.get("overrides") or {}).items()} or None,
            )


def _warm_up(store_root: Path) -> None:
    """Load everything a first question would: Prefect, the model, the current index."""
    from contracts import ArtifactStore
    from flows.backends import get_embedder
    from flows.ingest_flow import INDEX_POINTER
    from flows.tasks import load_search_index

    embedder = get_embedder("minilm")
    warm = getattr(embedder, "warm_up", None)
    if callable(warm):
        warm()
    ref = ArtifactStore(store_root).get_pointer(INDEX_POINTER)
    if ref is not None:
        load_search_index(str(store_root), ref)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows.service")
    parser.add_argument("--store", required=True)
    args = parser.parse_args(argv)
    store_root = Path(args.store).resolve()
    fingerprint = settings_fingerprint(os.environ)  # before this process adjusts its own environment
    code = code_fingerprint()  # of the files this process is about to load its stages from
    from flows.settings import configure_process_env, configure_query_process

    os.environ["CITEBOUND_HOME"] = str(store_root)
    configure_query_process()
    configure_process_env(store_root)
    from flows.server import ensure_server

    api_url = ensure_server(store_root)
    from flows.runners import local_run_settings

    idle = float(os.environ.get("CITEBOUND_SERVICE_IDLE", "1800"))
    service = _Service(store_root, secrets.token_hex(16), idle)
    with local_run_settings(api_url):
        _warm_up(store_root)
        state_path = service_state_path(store_root)
        tmp = state_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"pid": os.getpid(), "port": service.server_address[1], "token": service.token,
                       "settings": fingerprint, "code": code}, fh)
        os.replace(tmp, state_path)
        thread = threading.Thread(target=service.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True)
        thread.start()
        try:
            # A deleted store ends the service too: its state file went with the folder (flows/store_guard.py
            # does the same for the Prefect server and worker).
            while not service.idle() and state_path.parent.is_dir():
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
        finally:
            service.shutdown()
            if state_path.exists() and json.loads(state_path.read_text()).get("pid") == os.getpid():
                state_path.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
