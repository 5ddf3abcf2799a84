"""What the HTTP API does for a caller, in-process: answer, retrieve, list/upload/remove documents, show a source.

Every function takes the caller's tenant explicitly (the API derives it from the caller's key) and only ever
reads or changes that tenant's documents. The store and index are reached through ``flows`` (the same tasks
and flows the CLI runs); this module adds no pipeline logic of its own.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from contracts import (
    Answer,
    AnswerRequest,
    ArtifactStore,
    Catalog,
    CatalogEntry,
    Chunk,
    GenerationPolicy,
    IndexConfig,
    RetrievalResult,
    RetrieveConfig,
    sha256_text,
)
from contracts.errors import ConfigError

__all__ = ["EngineConfig", "Engine", "NotFound", "llm_host_allowed"]


class NotFound(LookupError):
    """Nothing of the caller's tenant by that name (whether another tenant has one is never said)."""


@dataclass(frozen=True)
class EngineConfig:
    store_root: Path
    embedder: str = "minilm"
    # Hosts a request may name as its OpenAI-compatible server (besides loopback): a caller must not make
    # the API reach arbitrary addresses.
    llm_hosts: frozenset[str] = field(default_factory=frozenset)
    index_type: str | None = None


def llm_host_allowed(base_url: str, allowed: frozenset[str]) -> bool:
    """Loopback or a configured host.

    >>> assert llm_host_allowed("http://127.0.0.1:8080/v1", frozenset())
    >>> assert not llm_host_allowed("http://169.254.169.254/", frozenset())
    >>> assert llm_host_allowed("https://llm.internal/v1", frozenset({"llm.internal"}))
    """
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host:
        return False
    if host == "localhost" or host in allowed:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _overrides(settings: dict[str, object] | None) -> dict[str, str]:
    # The `--set` form: strings as given, anything else as JSON (apply_overrides json-decodes each value).
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in (settings or {}).items()}


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class Engine:
    def __init__(self, cfg: EngineConfig) -> None:
        self.cfg = cfg
        self.root = str(Path(cfg.store_root).resolve())
        self.store = ArtifactStore(self.root)

    def warm_up(self) -> None:
        """Load what a first question would: the embedder and the current index."""
        from flows.backends import get_embedder
        from flows.ingest_flow import INDEX_POINTER
        from flows.tasks import load_search_index

        embedder = get_embedder(self.cfg.embedder)
        warm = getattr(embedder, "warm_up", None)
        if callable(warm):
            warm()
        ref = self.store.get_pointer(INDEX_POINTER)
        if ref is not None:
            load_search_index(self.root, ref, self.cfg.embedder)

    # ------------------------------------------------------------------ queries

    def retrieval_config(self, tenant: str, project: str, k: int | None, settings: dict[str, object] | None,
                         ) -> RetrieveConfig:
        """The project's standing settings, then this request's k and settings (RetrieveConfig fields only)."""
        from flows.answer_flow import apply_overrides, load_project_settings

        standing = load_project_settings(self.store, tenant, project)
        cfg, _ = apply_overrides(RetrieveConfig(), GenerationPolicy(), dict(standing.overrides) if standing else {})
        if k:
            cfg = RetrieveConfig.model_validate({**cfg.model_dump(), "top_k": k})
        cfg, _ = apply_overrides(cfg, GenerationPolicy(), _overrides(settings))
        return cfg

    def retrieve(self, query: str, *, tenant: str, project: str, k: int | None = None,
                 settings: dict[str, object] | None = None) -> RetrievalResult:
        from flows.index_views import view_ref
        from flows.tasks import request_task, retrieve_task

        cfg = self.retrieval_config(tenant, project, k, settings)
        # The caller's own view of the index (an empty one when it has no documents, whoever else has some).
        view = view_ref(self.store, tenant, project, self.cfg.embedder)
        # The same tasks as the answer flow, called without orchestration (as `citebound retrieve` does).
        req = request_task.fn(self.root, AnswerRequest(query=query, tenant_id=tenant, project_id=project,
                                                       top_k=cfg.top_k))
        step = retrieve_task.fn(self.root, req.output, view, cfg, self.cfg.embedder)
        return self.store.get(step.output, RetrievalResult)

    def answer(self, query: str, *, tenant: str, project: str, k: int | None = None,
               settings: dict[str, object] | None = None, llm: str | None = None, llm_model: str | None = None,
               llm_base_url: str | None = None) -> Answer:
        from flows.answer_flow import answer_question, validate_overrides

        overrides = _overrides(settings)
        validate_overrides(overrides)  # a bad key is the caller's error (422), not a refusal
        if llm_base_url and not llm_host_allowed(llm_base_url, self.cfg.llm_hosts):
            raise ConfigError(f"llm.base_url {llm_base_url!r}: only loopback or a host the API was started "
                              "with (--llm-host) may be named")
        # The answer flow's body without a Prefect flow run: same stages, artifacts and run record (replayable);
        # a flow run per request would queue 8 concurrent clients behind the Prefect server (bench/api.py).
        return answer_question(query, tenant=tenant, project=project, top_k=k, llm=llm, llm_model=llm_model,
                               llm_base_url=llm_base_url, store=self.root, embedder=self.cfg.embedder,
                               overrides=overrides or None)

    # ------------------------------------------------------------------ documents

    def catalog(self) -> Catalog:
        from flows.ingest_flow import CATALOG_POINTER

        ref = self.store.get_pointer(CATALOG_POINTER)
        return self.store.get(ref, Catalog) if ref else Catalog()

    def documents(self, tenant: str) -> list[CatalogEntry]:
        return [e for e in self.catalog().entries if e.tenant_id == tenant]

    def upload_dir(self, tenant: str, project: str) -> Path:
        # Hashed: tenant and project names are free text, never path parts.
        return Path(self.root) / "uploads" / sha256_text(f"{tenant}\x00{project}")[:24]

    def ingest_upload(self, filename: str, data: bytes, *, tenant: str, project: str,
                      doc_code: str | None = None):  # noqa: ANN201 - IngestReport
        from flows.ingest_flow import ingest_flow

        name = _SAFE_NAME.sub("_", Path(filename or "upload").name).strip("._") or "upload"
        folder = self.upload_dir(tenant, project)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / name
        tmp = target.with_name(f".{name}.part")
        tmp.write_bytes(data)
        tmp.replace(target)
        return ingest_flow(paths=[str(target)], doc_code=doc_code, tenant=tenant, project=project, store=self.root,
                           index_type=self.cfg.index_type, embedder=self.cfg.embedder)

    def remove_document(self, doc: str, *, tenant: str) -> tuple[str, ...]:
        """Remove the caller's document named by doc key, doc code or file name; NotFound otherwise."""
        from flows.ingest_flow import update_catalog_and_index

        matches = [e for e in self.documents(tenant) if doc in (e.doc_key, e.doc_code, e.filename)]
        if not matches:
            raise NotFound(doc)
        _, _, _, _, removed = update_catalog_and_index(
            self.store, [], remove_keys=tuple(e.doc_key for e in matches),
            index_cfg=IndexConfig(index_type=self.cfg.index_type or "flat"), embedder_name=self.cfg.embedder)
        uploads = Path(self.root) / "uploads"
        for entry in matches:
            # An uploaded file goes with its document; a file ingested from elsewhere by the CLI is not ours.
            if entry.doc_key in removed and uploads in Path(entry.path).parents:
                Path(entry.path).unlink(missing_ok=True)
        return removed

    def run(self, run_id: str):  # noqa: ANN201 - RunRecord | None
        try:
            return self.store.get_run(run_id)
        except Exception:  # noqa: BLE001 - unknown, malformed or unreadable ids are all "no such run"
            return None

    # ------------------------------------------------------------------ sources

    def source(self, semantic_id: str, *, tenant: str) -> Chunk:
        """The chunk a citation names, if it is one of the caller's tenant's (the current index only)."""
        for entry in self.documents(tenant):
            chunk = self._chunks_by_id(entry.chunk_set_sha256).get(semantic_id)
            if chunk is not None:
                return chunk
        raise NotFound(semantic_id)

    def source_pdf(self, chunk: Chunk) -> bytes | None:
        """The stored bytes of the PDF a chunk came from (None for text, Markdown or JSON sources)."""
        if not chunk.provenance.filename.lower().endswith(".pdf"):
            return None
        try:
            return self.store.get_blob(chunk.provenance.doc_hash)
        except Exception:  # noqa: BLE001 - a missing blob means no page to show, not a failed request
            return None

    def highlights(self, chunk: Chunk):  # noqa: ANN201 - api.highlight.PageHighlights | None
        from api.highlight import find_highlights

        pdf = self.source_pdf(chunk)
        if pdf is None:
            return None
        return find_highlights(pdf, chunk.text, chunk.provenance.page, chunk.provenance.page_end)

    @lru_cache(maxsize=256)  # noqa: B019 - one Engine per app; chunk sets are immutable
    def _chunks_by_id(self, chunk_set_sha: str) -> dict[str, Chunk]:
        from contracts import ChunkSet

        chunk_set = self.store.get(f"chunk_set.v1:{chunk_set_sha}", ChunkSet)
        return {c.semantic_id: c for c in chunk_set.chunks}
