"""What the HTTP API does for a caller, in-process: answer, retrieve, list/upload/remove documents, show a source.

Every function takes the caller's tenant explicitly (the API derives it from the caller's key) and only ever
reads or changes that tenant's documents. The store and index are reached through ``flows`` (the same tasks
and flows the CLI runs); this module adds no pipeline logic of its own.
"""

from __future__ import annotations

import ipaddress
import json
import re
import threading
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
    EmbeddingSet,
    GenerationPolicy,
    IndexConfig,
    RetrievalResult,
    RetrieveConfig,
    cache_key,
    sha256_bytes,
    sha256_text,
)
from contracts.errors import (
    ArtifactCorruptError,
    ArtifactNotFoundError,
    CiteboundError,
    ConfigError,
    DocumentDamagedError,
    StorageError,
)

__all__ = ["EngineConfig", "Engine", "NotFound", "QuotaExceeded", "llm_host_allowed"]


class NotFound(LookupError):
    """Nothing of the caller's tenant by that name (whether another tenant has one is never said)."""


class QuotaExceeded(Exception):
    """An upload the tenant's quota has no room for: ``status`` 413 (bytes) or 429 (documents)."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail = status, error, detail


@dataclass(frozen=True)
class EngineConfig:
    store_root: Path
    embedder: str = "minilm"
    # Hosts a request may name as its OpenAI-compatible server (besides loopback): a caller must not make
    # the API reach arbitrary addresses.
    llm_hosts: frozenset[str] = field(default_factory=frozenset)
    index_type: str | None = None
    # Where ingestion puts the index (flows.index_backends.index_target); None = FAISS in the store.
    index_uri: str | None = None
    # Per tenant: the bytes of its stored source files and its number of documents (0 = no limit).
    quota_bytes: int = 0
    quota_documents: int = 0


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
# What one file's ingest derives for that file alone (a rejected upload's are removed with it).
# Every version a store may hold (an upgraded store keeps its older objects).
_PER_DOCUMENT_KINDS = frozenset({"source_document.v1", "extracted_document.v2", "cleaned_document.v1",
                                 "cleaned_document.v2", "chunk_set.v1", "embedding_set.v1"})


class Engine:
    def __init__(self, cfg: EngineConfig) -> None:
        self.cfg = cfg
        self.root = str(Path(cfg.store_root).resolve())
        self.store = ArtifactStore(self.root)
        # Uploads being ingested, per tenant: (target path, bytes); counted against the quota until they end.
        self._in_flight: dict[str, list[tuple[str, int, str]]] = {}
        self._in_flight_lock = threading.Lock()

    def warm_up(self) -> str | None:
        """Load what a first question would: the embedder and the current index. When the index does not load (a
        document's chunk set or an index blob does not verify), say so and start anyway: each scope's view is
        then built from its own documents, the damaged one left out and named to the questions that need it
        (``flows/index_views.py``). Returns that note for the operator, None when all loaded."""
        from flows.backends import get_embedder
        from flows.ingest_flow import INDEX_POINTER
        from flows.tasks import load_search_index

        embedder = get_embedder(self.cfg.embedder)
        warm = getattr(embedder, "warm_up", None)
        if callable(warm):
            warm()
        try:
            ref = self.store.get_pointer(INDEX_POINTER)
            if ref is not None:
                load_search_index(self.root, ref, self.cfg.embedder)
        except (ArtifactCorruptError, ArtifactNotFoundError) as exc:
            return (f"the store's index does not load ({exc}): each tenant is served from its documents that "
                    "verify; run `citebound fsck`, then `citebound repair`")
        return None

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

    def upload_path(self, filename: str, *, tenant: str, project: str) -> Path:
        name = _SAFE_NAME.sub("_", Path(filename or "upload").name).strip("._") or "upload"
        return self.upload_dir(tenant, project) / name

    def usage(self, tenant: str) -> tuple[int, int]:
        """(bytes of stored source files, documents) of a tenant, uploads in flight included."""
        entries = self.documents(tenant)
        with self._in_flight_lock:
            return self._usage(entries, list(self._in_flight.get(tenant, [])))

    def _usage(self, entries: list[CatalogEntry], flying: list[tuple[str, int, str]]) -> tuple[int, int]:
        paths = {e.path for e in entries}
        flying = [f for f in flying if f[0] not in paths]
        return (sum(self.store.blob_size(e.doc_sha256) for e in entries) + sum(f[1] for f in flying),
                len(entries) + len({f[0] for f in flying}))

    def _reserve(self, tenant: str, target: Path, data: bytes) -> tuple[str, int, str]:
        """Count an upload against the tenant's quota (QuotaExceeded when it has no room); ``_release`` ends it."""
        cfg = self.cfg
        entries = self.documents(tenant)
        replaced = next((e for e in entries if e.path == str(target)), None)
        with self._in_flight_lock:
            used_bytes, used_docs = self._usage(entries, list(self._in_flight.get(tenant, [])))
            if replaced is not None:  # a new version of one of its files replaces it
                used_bytes -= self.store.blob_size(replaced.doc_sha256)
                used_docs -= 1
            if cfg.quota_documents and used_docs + 1 > cfg.quota_documents:
                raise QuotaExceeded(429, "document_quota_exceeded",
                                    f"this tenant holds {used_docs} of its {cfg.quota_documents} documents: "
                                    "delete one before uploading another")
            if cfg.quota_bytes and used_bytes + len(data) > cfg.quota_bytes:
                raise QuotaExceeded(413, "storage_quota_exceeded",
                                    f"this upload ({len(data)} bytes) does not fit: the tenant stores {used_bytes} of "
                                    f"its {cfg.quota_bytes} bytes")
            ticket = (str(target), len(data), sha256_bytes(data))
            self._in_flight.setdefault(tenant, []).append(ticket)
        return ticket

    def _release(self, tenant: str, ticket: tuple[str, int, str]) -> None:
        with self._in_flight_lock:
            self._in_flight[tenant].remove(ticket)
            if not self._in_flight[tenant]:
                del self._in_flight[tenant]

    def ingest_upload(self, filename: str, data: bytes, *, tenant: str, project: str,
                      doc_code: str | None = None):  # noqa: ANN201 - IngestReport
        """Ingest one uploaded file for the tenant, within its quota. A file the ingest rejects leaves nothing:
        its copy, its bytes in the store and what was derived from them are removed (a rejected new version of a
        file the tenant has keeps the old version, copy included)."""
        from flows.ingest_flow import ingest_flow

        target = self.upload_path(filename, tenant=tenant, project=project)
        # Shared with every ingest, exclusive for `citebound gc`: the copy is never swept before it is catalogued.
        with self.store.writers():
            ticket = self._reserve(tenant, target, data)
            try:
                previous = next((e for e in self.documents(tenant) if e.path == str(target)), None)
                tmp = target.with_name(f".{target.name}.part")
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    tmp.write_bytes(data)
                    tmp.replace(target)
                except OSError as exc:
                    tmp.unlink(missing_ok=True)
                    raise StorageError("write", target, exc) from exc
                report = None
                try:
                    report = ingest_flow(paths=[str(target)], doc_code=doc_code, tenant=tenant, project=project,
                                         store=self.root, index_type=self.cfg.index_type, embedder=self.cfg.embedder,
                                         index_uri=self.cfg.index_uri or "faiss")
                finally:
                    if report is None or report.files[0].status in ("error", "duplicate"):
                        self._discard(target, ticket[2], previous, report)
                return report
            finally:
                self._release(tenant, ticket)

    def _discard(self, target: Path, sha: str, previous: CatalogEntry | None, report) -> None:  # noqa: ANN001
        """Remove what a rejected (or interrupted) upload left: its copy (or the previous version's, restored),
        its bytes and the per-document artifacts its run derived, unless a catalogued document uses them."""
        if previous is not None and self.store.has_blob(previous.doc_sha256):
            target.write_bytes(self.store.get_blob(previous.doc_sha256))
        else:
            target.unlink(missing_ok=True)
        catalog = self.catalog()
        used = {e.doc_sha256 for e in catalog.entries}
        with self._in_flight_lock:
            used |= {t[2] for flying in self._in_flight.values() for t in flying if t[0] != str(target)}
        if sha not in used:
            self.store.delete_blob(sha)
        if report is None or not report.run_id:
            return
        kept = {e.chunk_set_sha256 for e in catalog.entries} | {e.embedding_set_sha256 for e in catalog.entries}
        try:
            steps = self.store.get_run(report.run_id).steps
        except CiteboundError:
            return
        for step in steps:
            out = step.output
            if out is not None and out.kind in _PER_DOCUMENT_KINDS and out.sha256 not in kept:
                if out.kind.startswith("embedding_set"):
                    try:
                        self.store.delete_blob(self.store.get(out, EmbeddingSet).vectors_blob)
                    except CiteboundError:
                        pass
                # The stage-cache entry that named it goes first: no entry may point at a deleted object.
                self.store.forget(cache_key(step.stage, step.stage_version, step.config_sha256, step.inputs,
                                            step.code_version), out)
                self.store.delete_object(out.kind, out.sha256)

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
        """The chunk a citation names, if it is one of the caller's tenant's (the current index only). When it is
        in none of the tenant's documents that verify and some do not, DocumentDamagedError names those."""
        return self._locate(semantic_id, tenant)[1]

    def neighbours(self, semantic_id: str, *, tenant: str) -> tuple[str | None, str | None]:
        """The semantic ids of the chunks before and after this one in its document (None at either end)."""
        entry, _ = self._locate(semantic_id, tenant)
        ids = list(self._chunks_by_id(entry.chunk_set_sha256))
        at = ids.index(semantic_id)
        return (ids[at - 1] if at > 0 else None), (ids[at + 1] if at + 1 < len(ids) else None)

    def _locate(self, semantic_id: str, tenant: str) -> tuple[CatalogEntry, Chunk]:
        from flows.index_views import document_name

        damaged: list[CatalogEntry] = []
        for entry in self.documents(tenant):
            try:
                chunk = self._chunks_by_id(entry.chunk_set_sha256).get(semantic_id)
            except (ArtifactCorruptError, ArtifactNotFoundError):
                damaged.append(entry)
                continue
            if chunk is not None:
                return entry, chunk
        if damaged:
            raise DocumentDamagedError(tuple(document_name(e.doc_code, e.filename) for e in damaged),
                                       tuple(f"chunk_set.v1:{e.chunk_set_sha256[:12]}" for e in damaged))
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
