"""The one ONNX Runtime every model of citebound runs on without torch: the query encoder, and the verifier.

An ONNX file is loaded by ``load_session(path, sha256, threads=...)``: its bytes are read once, their sha256
is checked against the one the caller recorded (a mismatch or a missing file raises ``OnnxModelError``, naming
the file), and the session is built from those same bytes, so what was checked is what runs. Sessions are
kept per process, one per (resolved path, sha256, threads, spinning): a second caller gets the same session.
``onnxruntime`` itself is imported on the first load, never when this module is.

Threads: ``threads=1`` (the default) runs each call on the calling thread, with no pool; that is what a process
serving queries wants (2 cores shared with FAISS and other requests: see ``st_embedder``'s docstring on
contention, measured there for torch), and concurrent calls from several threads then run side by side.
A batch job (ingestion) passes ``threads=0`` (ONNX Runtime picks one per physical core) or a number. Pool
threads never spin-wait between calls unless ``spin=True``: an idle process holding a session uses no CPU.

The public entry point for any model (the query encoder now, the trained verifier at its merge) is
``load_session(file, sha256, threads=N)``: one call, a hash-checked session shared per process. A model with
its own error type catches ``OnnxModelError`` (its message starts with the file's path) and re-raises, e.g.::

    try:
        session = load_session(model_dir / card.model_file, card.model_sha256, threads=self._threads)
    except OnnxModelError as exc:
        raise VerifierLoadError(str(exc)) from exc

Side files a model reads itself (a tokenizer) are checked with ``sha256_file(path) == recorded``.

``write_model(path, data)`` stores an ONNX file the way a cache must (a temp file beside it, fsync, rename)
and returns the sha256 to record for ``load_session``.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> sha = write_model(folder / "m.onnx", b"not really onnx")
>>> try:
...     load_session(folder / "m.onnx", "0" * 64)
... except OnnxModelError as exc:
...     print(str(exc).split(":")[0].endswith("m.onnx"))
True
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

from contracts._base import sha256_file
from contracts.errors import CiteboundError
from contracts.store import atomic_write

__all__ = ["OnnxModelError", "load_session", "write_model", "sha256_file", "loaded_sessions"]


class OnnxModelError(CiteboundError):
    """Raised by ``load_session`` when an ONNX file is missing, unreadable, not the bytes its recorded sha256
    names, or not loadable by ONNX Runtime; the message starts with the file's path."""


_lock = threading.Lock()
_sessions: dict[tuple[str, str, int, bool], Any] = {}


def write_model(path: str | os.PathLike[str], data: bytes) -> str:
    """Write ``data`` to ``path`` whole or not at all (``contracts.store.atomic_write``); returns its sha256."""
    atomic_write(Path(path), data)
    return hashlib.sha256(data).hexdigest()


def load_session(path: str | os.PathLike[str], sha256: str, *, threads: int = 1, spin: bool = False) -> Any:
    """The process's ``onnxruntime.InferenceSession`` for the ONNX file at ``path`` whose bytes hash to ``sha256``.

    Built on first call (CPU provider, all graph optimisations, ``threads`` intra-op threads: 1 = the caller's
    thread only, 0 = ONNX Runtime's choice; one inter-op thread), then returned from the process's cache.
    Raises ``OnnxModelError`` naming the file when it is missing or unreadable, when its bytes do not hash to
    ``sha256``, or when ONNX Runtime rejects it.
    """
    resolved = str(Path(path).expanduser().resolve())
    key = (resolved, sha256.lower(), int(threads), bool(spin))
    session = _sessions.get(key)
    if session is not None:
        return session
    with _lock:
        session = _sessions.get(key)
        if session is None:
            session = _sessions[key] = _build(resolved, key[1], key[2], key[3])
    return session


def loaded_sessions() -> tuple[tuple[str, str], ...]:
    """(path, sha256) of every session this process holds: what has been loaded so far (for tests and reports)."""
    return tuple(sorted({(path, sha) for path, sha, _, _ in _sessions}))


def _build(path: str, sha256: str, threads: int, spin: bool) -> Any:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise OnnxModelError(f"{path}: cannot read the ONNX file ({exc.strerror or exc})") from exc
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise OnnxModelError(f"{path}: its bytes hash to {found[:16]}..., not the recorded {sha256[:16]}... "
                             "(changed or damaged since it was written)")
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = max(0, threads)
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "1" if spin else "0")
    options.log_severity_level = 3  # errors only: no warnings about unused initialisers on stderr
    try:
        return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph/RuntimeException types
        raise OnnxModelError(f"{path}: ONNX Runtime cannot load it: {exc}") from exc
