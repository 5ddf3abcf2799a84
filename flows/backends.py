"""Which embedder, LLM, verifier and OCR engine a process uses: resolved by name, created once per process.

Tests and embedders of other deployments register their own factories (``register_embedder``,
``register_llm``); flows and tasks only ever pass names, so the same task runs in a thread, a Dask
worker or a Prefect worker process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from contracts.errors import ConfigError
from flows.settings import Settings
from stages.ports import LLM, Embedder, OcrEngine, Reranker, Verifier

__all__ = [
    "LLMSpec",
    "get_embedder",
    "get_llm",
    "get_ocr",
    "register_embedder",
    "register_llm",
    "get_verifier",
    "register_verifier",
    "VERIFIER_DIR",
    "READER_DIR",
    "get_reranker",
    "llm_spec_from_settings",
]

_lock = threading.Lock()
_embedders: dict[str, Embedder] = {}
_embedder_factories: dict[str, Callable[[], Embedder]] = {}
_llm_factories: dict[str, Callable[[dict[str, str]], LLM]] = {}
_ocr: OcrEngine | None = None
_verifiers: dict[str, Verifier] = {}
_verifier_factories: dict[str, Callable[[], Verifier]] = {}

VERIFIER_DIR = Path(__file__).resolve().parent.parent / "models" / "verifier"
"""The trained verifier shipped with citebound (``citebound train-verifier`` made it; card.json says how)."""
READER_DIR = Path(__file__).resolve().parent.parent / "models" / "reader"
"""The reader's trained models (``retriever/``, ``reranker/``), each with its card.json."""
_rerankers: dict[str, Reranker] = {}


def register_embedder(name: str, factory: Callable[[], Embedder]) -> None:
    with _lock:
        _embedder_factories[name] = factory
        _embedders.pop(name, None)


def register_llm(name: str, factory: Callable[[dict[str, str]], LLM]) -> None:
    with _lock:
        _llm_factories[name] = factory


def _default_embedder() -> Embedder:
    """all-MiniLM-L6-v2 on ONNX Runtime, its graph cached under ``CITEBOUND_MODEL_CACHE``."""
    import os

    from stages.adapters.onnx_embedder import OnnxMiniLMEmbedder

    # Query-serving processes (ask, retrieve, api) set CITEBOUND_QUERY_THREADS=1: one thread per call, no
    # pool (see stages/adapters/onnx_runtime.py); ingestion lets ONNX Runtime use a thread per core.
    threads = os.environ.get("CITEBOUND_QUERY_THREADS")
    return OnnxMiniLMEmbedder(Settings().model_cache, threads=int(threads) if threads else 0)


def _torch_embedder() -> Embedder:
    """The same model through sentence-transformers on torch: the reference the ONNX encoder is held to."""
    import os

    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    threads = os.environ.get("CITEBOUND_QUERY_THREADS")
    return SentenceTransformersEmbedder(num_threads=int(threads) if threads else None)


def _reader_embedder() -> Embedder:
    """The fine-tuned retriever (``models/reader/retriever``) on ONNX Runtime: another identity than ``minilm``,
    so a store's index is rebuilt for it (``citebound index``)."""
    import os

    from stages.adapters.reader_embedder import OnnxReaderEmbedder

    threads = os.environ.get("CITEBOUND_QUERY_THREADS")
    return OnnxReaderEmbedder(Settings().model_cache, READER_DIR / "retriever", threads=int(threads) if threads else 0)


_BUILT_IN_EMBEDDERS: dict[str, Callable[[], Embedder]] = {"minilm": _default_embedder, "minilm-torch": _torch_embedder,
                                                          "minilm-reader": _reader_embedder}


def get_embedder(name: str = "minilm") -> Embedder:
    """The process-wide embedder called ``name``: ``minilm`` = all-MiniLM-L6-v2 from its PyPI package on ONNX
    Runtime; ``minilm-torch`` = the same through sentence-transformers (same identity, vectors within 1e-6)."""
    with _lock:
        if name not in _embedders:
            factory = _embedder_factories.get(name) or _BUILT_IN_EMBEDDERS.get(name)
            if factory is None:
                known = ", ".join([*_BUILT_IN_EMBEDDERS, *_embedder_factories])
                raise ConfigError(f"unknown embedder {name!r}; known: {known}")
            _embedders[name] = factory()
        return _embedders[name]


# An LLM spec is plain data (JSON-able) so it can be a Prefect parameter and part of a cache key.
LLMSpec = dict[str, str]


def llm_spec_from_settings(
    settings: Settings, name: str | None = None, model: str | None = None, base_url: str | None = None
) -> LLMSpec:
    """The spec of the LLM a call asks for. ``base_url`` (an API request's own server) overrides the
    process's ``OPENAI_BASE_URL``; such a spec is marked so the process's ``OPENAI_API_KEY`` is never sent
    to a server the caller chose."""
    backend = (name or settings.llm).strip().lower()
    spec: LLMSpec = {"backend": backend}
    if backend == "openai":
        spec["model"] = model or settings.llm_model
        spec["base_url"] = base_url or settings.openai_base_url or ""
        spec["timeout"] = str(settings.llm_timeout)
        if base_url and base_url != settings.openai_base_url:
            spec["api_key"] = "none"
    elif model:
        spec["model"] = model
    return spec


def get_llm(spec: LLMSpec) -> LLM:
    """Build the LLM a spec names. ``extractive`` (default) needs no key and no server."""
    backend = spec.get("backend", "extractive")
    if backend in _llm_factories:
        return _llm_factories[backend](spec)
    if backend == "extractive":
        from stages.adapters.extractive_llm import ExtractiveLLM

        return ExtractiveLLM()
    if backend == "openai":
        import os

        from stages.adapters.openai_llm import OpenAILLM

        return OpenAILLM(
            spec.get("model") or "gpt-4o-mini",
            base_url=spec.get("base_url") or None,
            # The key is read here, never stored in a spec, an artifact or a run record.
            api_key=(os.environ.get("OPENAI_API_KEY") if spec.get("api_key") != "none" else None) or "not-needed",
            timeout=float(spec.get("timeout") or 60.0),
        )
    raise ConfigError(f"unknown LLM backend {backend!r}: use 'extractive', 'openai' or a registered name")


def register_verifier(name: str, factory: Callable[[], Verifier]) -> None:
    with _lock:
        _verifier_factories[name] = factory
        _verifiers.pop(name, None)


def get_verifier(name: str = "citebound") -> Verifier:
    """The process-wide verifier: ``citebound`` (the shipped model), a registered name, or a model folder.

    Built lazily: the model file is read and hash-checked on first use, where a missing or corrupt file raises
    ``VerifierLoadError`` (the answer chain turns it into a refusal with reason ``verifier_unavailable``)."""
    with _lock:
        if name not in _verifiers:
            factory = _verifier_factories.get(name)
            if factory is not None:
                _verifiers[name] = factory()
            else:
                import os

                from stages.adapters.onnx_verifier import OnnxVerifier

                folder = VERIFIER_DIR if name == "citebound" else Path(name)
                threads = os.environ.get("CITEBOUND_QUERY_THREADS")
                _verifiers[name] = OnnxVerifier(folder, threads=int(threads) if threads else 1)
        return _verifiers[name]


def get_reranker(name: str = "reader") -> Reranker:
    """The process-wide reranker: ``reader`` (the shipped model in ``models/reader/reranker``) or a model folder.

    Built lazily: its files are hash-checked on first use, where a missing or altered file raises
    ``ReaderModelError`` naming it."""
    with _lock:
        if name not in _rerankers:
            import os

            from stages.adapters.onnx_reranker import OnnxReranker

            folder = READER_DIR / "reranker" if name == "reader" else Path(name)
            threads = os.environ.get("CITEBOUND_QUERY_THREADS")
            _rerankers[name] = OnnxReranker(folder, threads=int(threads) if threads else 1)
        return _rerankers[name]


def get_ocr() -> OcrEngine | None:
    """Tesseract through pytesseract, or None when the binary is missing (pages needing OCR are then reported)."""
    global _ocr
    with _lock:
        if _ocr is None:
            import shutil

            if shutil.which("tesseract") is None:
                return None
            from stages.adapters.tesseract_ocr import TesseractOcr

            _ocr = TesseractOcr()
        return _ocr
