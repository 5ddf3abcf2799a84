"""Real processes for the fault tests: `citebound` commands run as subprocesses on 127.0.0.1, each carrying a
mark in its environment so that every process it starts (and only those) can be found and counted afterwards,
and the user's Prefect server started once per module beside them (not a process of theirs) and stopped after."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import pytest

from flows.localhost import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
MARK = "CITEBOUND_FAULT_TEST_MARK"
# Generous: a start of the API loads torch and MiniLM; on a loaded 2-core machine that can take minutes.
START_DEADLINE_S = 300.0


def marked_processes(mark: str) -> list[psutil.Process]:
    """Every live process whose environment carries ``mark`` (zombies are dead: they hold nothing)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if proc.environ().get(MARK) == mark:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def _alive(pid: int) -> psutil.Process | None:
    try:
        proc = psutil.Process(pid)
        return None if proc.status() == psutil.STATUS_ZOMBIE else proc
    except psutil.NoSuchProcess:
        return None


def seconds_until_none_left(mark: str, since: float, command_pid: int, deadline_s: float = 60.0) -> float:
    """Poll until neither the command (``command_pid``: a library may rewrite its environment block for its
    process title) nor any process carrying ``mark`` is alive; the seconds from ``since`` (a
    ``time.monotonic()``) until then. Raises AssertionError naming the survivors after ``deadline_s``."""
    while True:
        left = [p for p in [_alive(command_pid), *marked_processes(mark)] if p is not None]
        now = time.monotonic()
        if not left:
            return now - since
        if now - since > deadline_s:
            names = [f"{p.pid}:{p.name()}" for p in left]
            raise AssertionError(f"processes still alive {deadline_s:.0f} s after the signal: {names}")
        time.sleep(0.05)


def port_is_free(port: int) -> bool:
    """Whether a server could bind 127.0.0.1:port now (as uvicorn does, with SO_REUSEADDR)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def kill_marked(mark: str) -> None:
    """Test clean-up: SIGKILL whatever still carries the mark (only processes this test started)."""
    for proc in marked_processes(mark):
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


@dataclass
class Cli:
    """`citebound` as a command for one store, with an environment of its own."""

    store: Path
    env: dict[str, str]
    mark: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def argv(self) -> list[str]:
        return [sys.executable, "-m", "cli", "--store", str(self.store)]

    def marked_env(self) -> dict[str, str]:
        return {**self.env, MARK: self.mark}

    def run(self, *args: str, timeout: float = 600, **kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.argv, *args], env=self.marked_env(), cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, **kw)

    def popen(self, *args: str, **kw: object) -> subprocess.Popen:
        return subprocess.Popen([*self.argv, *args], env=self.marked_env(), cwd=ROOT, **kw)


def user_env(base: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CITEBOUND_USER_HOME": str(base / "user"),
           "CITEBOUND_PREFECT_PORT": str(free_port()), "CITEBOUND_PREFECT": "background"}
    env.pop("PREFECT_API_URL", None)
    env.pop(MARK, None)
    return env


@pytest.fixture(scope="module")
def prefect_env(tmp_path_factory) -> Iterator[dict[str, str]]:
    """An environment whose user has a Prefect server running (started here, stopped after the module)."""
    base = tmp_path_factory.mktemp("faults-user")
    env = user_env(base)
    subprocess.run([sys.executable, "-c", "from flows.server import ensure_server; ensure_server()"], env=env,
                   cwd=ROOT, check=True, capture_output=True, timeout=START_DEADLINE_S)
    try:
        yield env
    finally:
        subprocess.run([sys.executable, "-m", "cli", "--store", str(base / "unused"), "server", "--stop"], env=env,
                       cwd=ROOT, capture_output=True, timeout=180)


@dataclass
class ApiProcess:
    proc: subprocess.Popen
    port: int
    cli: Cli

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=60)
        kill_marked(self.cli.mark)


def start_api(cli: Cli, port: int | None = None, *extra: str, auth: bool = False) -> ApiProcess:
    """`citebound api` on 127.0.0.1 (``--no-auth`` unless ``auth``: keys from `citebound keys add`), waited for
    until /health answers."""
    port = port or free_port()
    proc = cli.popen("api", *([] if auth else ["--no-auth"]), "--port", str(port), *extra, stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, text=True)
    api = ApiProcess(proc, port, cli)

    def healthy() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"citebound api exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        try:
            return httpx.get(api.url + "/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    if wait_until(healthy, START_DEADLINE_S, interval=0.3):
        return api
    api.stop()
    raise AssertionError("citebound api did not answer /health in time")


def image_only_pdf(path: Path, shared_data: Path, copies: int) -> Path:
    """An image-only PDF long enough that OCR is still running when the test acts: the shared scan, repeated."""
    import pymupdf

    scan = pymupdf.open(shared_data / "scanned-pdfs" / "Child_Labour_Prohibition_and_Regulation_Rules_1988_scanned.pdf")
    out = pymupdf.open()
    for _ in range(copies):
        out.insert_pdf(scan)
    assert all(not page.get_text().strip() for page in out), "the scan must have no text layer"
    out.save(path)
    return path


def wait_for_marked(mark: str, name: str, deadline_s: float = START_DEADLINE_S) -> psutil.Process:
    """Poll until a process called ``name`` carries ``mark`` (e.g. a tesseract run of the command under test)."""

    def started() -> psutil.Process | None:
        for proc in marked_processes(mark):
            try:
                if proc.name() == name:
                    return proc
            except psutil.NoSuchProcess:
                continue
        return None

    found = wait_until(started, deadline_s, interval=0.05)
    if found is not None:
        return found
    raise AssertionError(f"no {name} process started within {deadline_s:.0f} s")
