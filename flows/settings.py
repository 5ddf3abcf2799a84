"""Process settings: the one place citebound reads its environment (prefix ``CITEBOUND_``).

Stages never read the environment; flows build configs from these settings and pass them in.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "configure_process_env", "configure_query_process"]


class Settings(BaseSettings):
    """Every knob a deployment sets from outside. ``CITEBOUND_HOME`` is the store root."""

    model_config = SettingsConfigDict(env_prefix="CITEBOUND_", env_file=".env", extra="ignore", frozen=True)

    home: Path = Field(default=Path("artifacts"))
    # Per-user state shared by all stores: the one local Prefect server (its database and pid file).
    user_home: Path = Field(default_factory=lambda: Path.home() / ".citebound")
    prefect_port: int = Field(default=4210, gt=0, lt=65536)
    # The HTTP API `ask`/`retrieve` use when one is up for their store (`citebound api`), and its key.
    api_url: str = "http://127.0.0.1:8000"
    api_key: str | None = None
    llm: str = "extractive"
    llm_model: str = "gpt-4o-mini"
    llm_timeout: float = 60.0
    llm_retries: int = 1
    verifier: str = "citebound"
    """The verifier model: ``citebound`` (the trained model shipped in models/verifier) or a model folder."""
    top_k: int = 5
    tenant: str = "default"
    project: str = "default"
    index_type: Literal["flat", "hnsw"] = "flat"
    # Where the index lives: unset/"faiss" = FAISS + BM25 in the store; http://host:port = a Milvus server (with
    # index_token); a path ending in .db = milvus-lite embedded (flows/index_backends.py).
    index_uri: str | None = None
    index_token: SecretStr | None = None
    task_runner: Literal["thread", "dask"] = "thread"
    dask_address: str | None = None
    dask_workers: int = 2
    refusal_text: str | None = None
    min_confidence: float | None = None
    ocr_enabled: bool = True
    # The HTTP API's limits per tenant: bytes of stored source files, and documents (0 = no limit).
    quota_bytes: int = Field(default=5 * 1024**3, ge=0)
    quota_documents: int = Field(default=10_000, ge=0)
    # `citebound eval`: the public data sets (default: the shared/data folder beside the checkout) and the
    # cache of their embeddings (content-addressed, kept between runs).
    shared_data: Path | None = None
    eval_cache: Path = Field(default_factory=lambda: Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                             / "citebound" / "eval")
    # Models written from installed packages' weights (the MiniLM ONNX graph), each checked by its sha256.
    model_cache: Path = Field(default_factory=lambda: Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                              / "citebound" / "models")

    @property
    def shared_data_dir(self) -> Path:
        if self.shared_data is not None:
            return self.shared_data.expanduser().resolve()
        here = Path(__file__).resolve().parent.parent
        return next((p / "shared" / "data" for p in here.parents if (p / "shared" / "data").is_dir()),
                    here.parent / "shared" / "data")

    @property
    def openai_base_url(self) -> str | None:
        # The openai client's own variable names, so an existing setup just works.
        return os.environ.get("OPENAI_BASE_URL") or None

    @property
    def openai_api_key(self) -> str | None:
        return os.environ.get("OPENAI_API_KEY") or None


def configure_process_env(store_root: Path | None = None) -> None:
    """Offline + quiet defaults for the libraries, set before they are imported. Explicit env wins.

    Prefect's home is per user (``CITEBOUND_USER_HOME``, default ``~/.citebound``), not per store: one local
    Prefect server serves all of a user's stores."""
    defaults = {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "TRANSFORMERS_VERBOSITY": "error",
        "OMP_THREAD_LIMIT": "1",
        "PREFECT_HOME": str(Settings().user_home.expanduser().resolve() / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "PREFECT_LOGGING_TO_API_ENABLED": "false",
        "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "false",
    }
    for key, value in defaults.items():
        os.environ.setdefault(key, value)
    # bm25s sets its own logger to DEBUG when imported; a filter (unlike a level) survives that.
    logging.getLogger("bm25s").addFilter(lambda record: record.levelno >= logging.WARNING)


def configure_query_process() -> None:
    """A process that serves queries: torch and FAISS on one thread each, waiting passively.

    On 2 cores both libraries' spinning threads fight each other (encode p95 436 ms vs 12 ms measured by the
    retrieval bench); ingestion keeps the defaults, where 2 threads encode long batches faster. Set before
    torch and FAISS are imported.
    """
    os.environ.setdefault("CITEBOUND_QUERY_THREADS", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
