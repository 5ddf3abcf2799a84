"""The ``ingest`` flow: files -> SourceDocument -> ExtractedDocument -> CleanedDocument -> ChunkSet
(injection-flagged) -> EmbeddingSet per file, in parallel; then one serialised update of the catalog and
the search index. A bad file is reported with its reason and the rest of the batch goes on."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

from tqdm import tqdm

from contracts import (
    ArtifactRef,
    ArtifactStore,
    Catalog,
    CatalogEntry,
    ChunkConfig,
    ChunkSet,
    CleanConfig,
    EmbedConfig,
    EmbeddingSet,
    ExtractConfig,
    ExtractedDocument,
    FileIngestReport,
    IndexConfig,
    IndexManifest,
    IngestReport,
    RunStep,
    content_sha256,
    sha256_text,
)
from contracts.errors import (
    ArtifactCorruptError,
    ArtifactNotFoundError,
    CiteboundError,
    IngestError,
    StorageError,
)
from flows import runs
from flows.backends import get_embedder
from flows.index_backends import IndexTarget, index_target, manifest_target
from flows.index_writes import WorkerWrite, prepare_worker_writes, write_own_chunks
from flows.lazy_prefect import NO_CACHE, flow, task
from flows.settings import Settings
from flows.tasks import (
    _store,
    chunk_task,
    clean_task,
    embed_task,
    extract_task,
    flag_task,
    run_stage,
    source_task,
)
from flows.store_layout import CATALOG_POINTER, INDEX_POINTER, vectors_from_bytes
from stages.ingest.flags import EXERCISE_FLAG, FRONT_MATTER_FLAG

__all__ = ["ingest_flow", "reindex", "expand_paths", "INGESTIBLE_SUFFIXES", "CATALOG_POINTER", "INDEX_POINTER"]

INGESTIBLE_SUFFIXES = (".pdf", ".txt", ".md", ".json")


def expand_paths(paths: list[str]) -> list[str]:
    """Files as given, folders walked recursively for ingestible files (sorted, so runs are reproducible).
    Paths that do not exist are kept: they become a per-file ``missing`` error, not a crash."""
    out: list[str] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if p.is_dir():
            stores = {s.parent for s in p.rglob("objects") if (s.parent / "pointers").is_dir() or (s.parent / "runs").is_dir()}
            out.extend(
                str(f) for f in sorted(p.rglob("*"))
                if f.is_file() and f.suffix.lower() in INGESTIBLE_SUFFIXES and not f.name.startswith(".")
                # Never ingest a citebound store (or a Prefect home) that happens to sit inside the folder.
                and not any(s in f.parents for s in stores)
            )
        else:
            out.append(str(p))
    return list(dict.fromkeys(out))


def doc_key_of(tenant_id: str, project_id: str, path: str) -> str:
    """A document's identity across versions of its bytes: who owns it and where it came from."""
    return sha256_text(f"{tenant_id}\x00{project_id}\x00{Path(path).resolve()}")[:24]


class _FileFailureFilter(logging.Filter):
    """Keeps a file's own failure off the console: Prefect logs a nested task that raised ``IngestError`` with its
    traceback ("Task run failed with exception: IngestError(...)", then "Finished in state Failed(...)"), though the
    failure is data (the file's row in the report says it in one line). The API log handler still records it."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, IngestError):
            return False
        return "exception IngestError:" not in record.getMessage()


def quiet_file_failures() -> None:
    """Install ``_FileFailureFilter`` on this process's console handlers (idempotent; Dask workers call it too)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and not any(
                isinstance(f, _FileFailureFilter) for f in handler.filters):
            handler.addFilter(_FileFailureFilter())


@task(name="ingest-file", cache_policy=NO_CACHE)
def ingest_file_task(
    store_root: str,
    path: str,
    doc_code: str | None,
    tenant_id: str,
    project_id: str,
    extract_cfg: ExtractConfig,
    clean_cfg: CleanConfig,
    chunk_cfg: ChunkConfig,
    embed_cfg: EmbedConfig,
    embedder_name: str,
    previous_embedding_sha: str | None,
    index_write: WorkerWrite | None = None,
    previous_chunk_set_sha: str | None = None,
    stored_sha: str | None = None,
) -> tuple[FileIngestReport, tuple[RunStep, ...], bool]:
    """All per-file stages, each its own (nested) task; any failure of the file becomes its error report (a
    refusal of the store's file system is no fault of the file: it ends the run). ``stored_sha`` reads the
    file's bytes from the store's blob instead of ``path`` (``citebound repair`` re-derives a document).

    With ``index_write`` (the index is a Milvus server) the worker then upserts its own chunks there; the third
    element says whether it did (``flows.index_writes.write_own_chunks``)."""
    started = time.perf_counter()
    steps: list[RunStep] = []
    indexed = False
    quiet_file_failures()
    try:
        steps.append(source_task(store_root, path, doc_code, tenant_id, project_id, stored_sha))
        steps.append(extract_task(store_root, steps[-1].output, extract_cfg))
        extracted_ref = steps[-1].output
        steps.append(clean_task(store_root, extracted_ref, clean_cfg))
        steps.append(chunk_task(store_root, steps[-1].output, chunk_cfg))
        steps.append(flag_task(store_root, steps[-1].output))
        chunk_set_ref = steps[-1].output
        steps.append(embed_task(store_root, chunk_set_ref, embed_cfg, embedder_name, previous_embedding_sha))
        store = _store(store_root)
        chunk_set = store.get(chunk_set_ref, ChunkSet)
        extracted = store.get(extracted_ref, ExtractedDocument)
        if not chunk_set.chunks:
            raise IngestError("no_text", "no text could be extracted from any page", filename=path)
        quarantined = tuple(c.semantic_id for c in chunk_set.chunks if "injection_suspected" in c.flags)
        report = FileIngestReport(
            path=path, status="ingested", doc_code=chunk_set.source.doc_code,
            doc_key=doc_key_of(tenant_id, project_id, path),
            n_pages=len(extracted.pages), n_ocr_pages=sum(p.origin == "ocr" for p in extracted.pages),
            n_chunks=len(chunk_set.chunks), quarantined=quarantined,
            n_front_matter=sum(FRONT_MATTER_FLAG in c.flags for c in chunk_set.chunks),
            n_exercise=sum(EXERCISE_FLAG in c.flags for c in chunk_set.chunks), notes=extracted.warnings,
            seconds=round(time.perf_counter() - started, 3),
            chunk_set_sha256=chunk_set_ref.sha256, embedding_set_sha256=steps[-1].output.sha256,
        )
        if index_write is not None:
            indexed = write_own_chunks(store, index_write, chunk_set, steps[-1].output.sha256,
                                       get_embedder(embedder_name), previous_chunk_set_sha)
    except IngestError as exc:
        report = FileIngestReport(path=path, status="error", reason=exc.reason, message=str(exc),
                                  seconds=round(time.perf_counter() - started, 3))
    except StorageError:
        raise
    except CiteboundError as exc:
        report = FileIngestReport(path=path, status="error", reason=type(exc).__name__, message=str(exc),
                                  seconds=round(time.perf_counter() - started, 3))
    except Exception as exc:  # noqa: BLE001 - one file's surprise must not stop the batch
        report = FileIngestReport(path=path, status="error", reason="internal_error",
                                  message=f"{type(exc).__name__}: {exc}", seconds=round(time.perf_counter() - started, 3))
    return report, tuple(steps), indexed


class _ChunkSets:
    """Chunk sets read at most once per catalog update (a store may hold thousands)."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self._sets: dict[str, ChunkSet] = {}
        self._ids: dict[str, frozenset[str]] = {}

    def load(self, sha: str) -> ChunkSet:
        if sha not in self._sets:
            self._sets[sha] = self.store.get(f"chunk_set.v1:{sha}", ChunkSet)
        return self._sets[sha]

    def ids(self, sha: str) -> frozenset[str]:
        """The set's semantic ids; none for a set that does not verify (a damaged document, until repair)."""
        # Asked once per other catalog entry for every file of the update: built once per set.
        if sha not in self._ids:
            try:
                self._ids[sha] = frozenset(c.semantic_id for c in self.load(sha).chunks)
            except (ArtifactCorruptError, ArtifactNotFoundError):
                self._ids[sha] = frozenset()
        return self._ids[sha]


def _verifies(store: ArtifactStore, chunk_sets: _ChunkSets, entry: CatalogEntry) -> bool:
    """Whether a catalog entry's chunk set and (for chunks) stored vectors verify: what an index may hold."""
    try:
        if chunk_sets.load(entry.chunk_set_sha256).chunks:
            emb = store.get(f"embedding_set.v1:{entry.embedding_set_sha256}", EmbeddingSet)
            vectors_from_bytes(store.get_blob(emb.vectors_blob))
    except (ArtifactCorruptError, ArtifactNotFoundError, ValueError):
        return False
    return True


def _build_index(
    store: ArtifactStore,
    chunk_sets: _ChunkSets,
    catalog: Catalog,
    previous: IndexManifest | None,
    previous_ref: ArtifactRef | None,
    index_cfg: IndexConfig,
    embedder_name: str,
    target: IndexTarget,
    *,
    written: frozenset[str] = frozenset(),
    fresh: bool = False,
    full: bool = False,
    identity=None,  # noqa: ANN001 - the stored vectors' model, when no embedder is loaded (reindex)
    discard: frozenset[str] = frozenset(),
) -> tuple[ArtifactRef, IndexManifest]:
    """The index for ``catalog`` on ``target``: incremental from the previous one when it is current there, else
    rebuilt from the stored vectors (``flows.index_writes.write_index``); then its manifest.

    A document whose chunk set or vectors do not verify (damaged, until ``citebound repair``) stays in the
    catalog and is left out of a rebuilt index: one damaged document never stops the others' ingest or removal.
    ``full`` rebuilds from the stored vectors (``reindex``, ``citebound repair``)."""
    from flows.index_writes import write_index

    embedder = identity or get_embedder(embedder_name)
    wanted = [e.chunk_set_sha256 for e in catalog.entries]
    previous_is_current = (
        not full and previous is not None and previous_ref is not None
        and (previous.embedding_model, previous.model_revision) == (embedder.model_name, embedder.model_revision)
        and previous.index_type == index_cfg.index_type
        and index_is_current(store, previous, index_cfg, target, embedder_name))

    def write(cat: Catalog, *, full: bool, previous_is_current: bool) -> dict[str, object]:
        return write_index(store, chunk_sets.load, cat, previous, previous_ref, index_cfg, embedder_name, target,
                           written=written, fresh=fresh, full=full, identity=identity,
                           previous_is_current=previous_is_current, discard=discard)

    kept = catalog
    try:
        where = write(catalog, full=full, previous_is_current=previous_is_current)
    except (ArtifactCorruptError, ArtifactNotFoundError):
        # A damaged set or blob (under the old index, or among the catalog's): rebuild from what verifies.
        kept = Catalog(entries=tuple(e for e in catalog.entries if _verifies(store, chunk_sets, e)))
        where = write(kept, full=True, previous_is_current=False)
    wanted = [e.chunk_set_sha256 for e in kept.entries]
    manifest = IndexManifest(
        embedding_model=embedder.model_name, model_revision=embedder.model_revision, dim=embedder.dim,
        index_type=index_cfg.index_type, n_vectors=sum(e.n_chunks for e in kept.entries),
        chunk_set_sha256s=tuple(wanted), chunk_sets_sha256=content_sha256(list(wanted)),
        doc_codes=tuple(sorted({(e.tenant_id, e.project_id, e.doc_code) for e in kept.entries})), **where,
    )
    from stages.index import search_index as index_stage

    step = run_stage(store, stage="index", stage_version=index_stage.STAGE_VERSION, config=index_cfg,
                     inputs=(), compute=lambda: manifest, force=True)
    return step.output, manifest


def index_is_current(store: ArtifactStore, manifest: IndexManifest, index_cfg: IndexConfig,
                     target: IndexTarget | None = None, embedder_name: str | None = None) -> bool:
    """Whether the saved index is on ``target`` (default: where it is) and was built under what this code and
    config build now: for FAISS its BM25 parameters, normaliser and config (the small ``params`` blob); for
    Milvus the collection's schema, fingerprint and index parameters read back (with ``embedder_name``'s model,
    else the manifest's). A stale index is rebuilt from the stored vectors, not patched."""
    from types import SimpleNamespace

    from flows.index_writes import milvus_is_current
    from stages.index.saved_params import check_params

    target = target or manifest_target(manifest)
    if manifest.backend == "milvus":
        model = get_embedder(embedder_name) if embedder_name else SimpleNamespace(
            model_name=manifest.embedding_model, model_revision=manifest.model_revision, dim=manifest.dim)
        try:
            return milvus_is_current(manifest, target, str(store.root), index_cfg, model)
        except CiteboundError:
            return False
    if target.backend != "faiss":
        return False
    blobs = dict(manifest.blobs)
    try:
        params = {"params": store.get_blob(blobs["params"])} if "params" in blobs else {}
        stale_bm25 = check_params(params, index_cfg.model_copy(update={"index_type": manifest.index_type}))
    except CiteboundError:  # a mismatch, or a missing or unreadable params blob
        return False
    return not stale_bm25


def update_catalog_and_index(
    store: ArtifactStore,
    reports: list[FileIngestReport],
    *,
    remove_keys: tuple[str, ...] = (),
    index_cfg: IndexConfig,
    embedder_name: str,
    target: IndexTarget | None = None,
    written: frozenset[str] = frozenset(),
    fresh: bool = False,
    rebuild: bool = False,
) -> tuple[list[FileIngestReport], Catalog, ArtifactRef | None, IndexManifest | None, tuple[str, ...]]:
    """Serialised (store lock) read-modify-write of the catalog and index pointers.

    ``target``: where the index is to be (None: where the current one is, FAISS for none); an index elsewhere is
    rebuilt there from the stored vectors. ``written``: chunk sets ingest workers already upserted into a Milvus
    server in this run; ``fresh``: the run started that collection empty (``flows.index_writes``). ``rebuild``
    builds the index afresh from the stored vectors (``citebound repair``) instead of updating the previous one.

    Semantic ids are made unique within the tenant: an id another tenant uses is no clash (and renaming it
    would tell this tenant what the other holds)."""
    from flows.duplicates import TextFingerprints
    from stages.ingest.chunk import resolve_id_clashes

    chunk_sets = _ChunkSets(store)
    fingerprints = TextFingerprints(store)
    stray: set[str] = set()  # chunk sets of duplicates (a worker may have written them to a Milvus server)
    with store.writers(), store.lock("index"):
        cat_ref = store.get_pointer(CATALOG_POINTER)
        catalog = store.get(cat_ref, Catalog) if cat_ref else Catalog()
        idx_ref = store.get_pointer(INDEX_POINTER)
        try:
            previous = store.get(idx_ref, IndexManifest) if idx_ref else None
        except (ArtifactCorruptError, ArtifactNotFoundError):
            idx_ref, previous = None, None  # a damaged index manifest: the index is rebuilt below
        target = target or manifest_target(previous)
        entries = catalog.by_key()
        removed = tuple(k for k in remove_keys if entries.pop(k, None) is not None)
        final_reports: list[FileIngestReport] = []
        for rep in reports:
            if rep.status != "ingested":
                final_reports.append(rep)
                continue
            old = entries.get(rep.doc_key)
            chunk_set = chunk_sets.load(rep.chunk_set_sha256)
            tenant = chunk_set.source.tenant_id
            twin = fingerprints.duplicate_of(rep.chunk_set_sha256, rep.doc_key, entries.values(), tenant,
                                             chunk_set.source.project_id)
            if twin is not None:
                stray.add(rep.chunk_set_sha256)
                final_reports.append(rep.model_copy(update={
                    "status": "duplicate", "reason": "duplicate_text", "duplicate_of": twin.filename,
                    "message": f"same text as {twin.filename}, already stored: not added"}))
                continue
            taken = frozenset().union(*(chunk_sets.ids(e.chunk_set_sha256) for key, e in entries.items()
                                        if key != rep.doc_key and e.tenant_id == tenant))
            deduped = resolve_id_clashes(chunk_set, taken)
            cs_sha = rep.chunk_set_sha256
            if deduped != chunk_set:
                cs_sha = store.put(deduped, stage="dedupe_ids", stage_version="dedupe_ids.v1",
                                   inputs=(store.ref_of(f"chunk_set.v1:{cs_sha}"),)).sha256
            entry = CatalogEntry(
                doc_key=rep.doc_key, tenant_id=chunk_set.source.tenant_id, project_id=chunk_set.source.project_id,
                path=chunk_set.source.path, filename=chunk_set.source.filename, doc_code=chunk_set.source.doc_code,
                doc_sha256=chunk_set.source.sha256, chunk_set_sha256=cs_sha,
                embedding_set_sha256=rep.embedding_set_sha256 or "", n_chunks=rep.n_chunks,
                n_pages=rep.n_pages, n_ocr_pages=rep.n_ocr_pages, quarantined=rep.quarantined,
            )
            status = "unchanged" if old == entry else "ingested"
            entries[rep.doc_key] = entry
            final_reports.append(rep.model_copy(update={
                "status": status, "chunk_set_sha256": cs_sha, "id_clashes": deduped.id_clashes}))
        new_catalog = Catalog(entries=tuple(entries[k] for k in sorted(entries)))
        stray_written = frozenset(stray & written) - {e.chunk_set_sha256 for e in new_catalog.entries}
        if (not rebuild and cat_ref is not None and new_catalog == catalog and previous is not None
                and not stray_written and index_is_current(store, previous, index_cfg, target, embedder_name)):
            return final_reports, catalog, idx_ref, previous, removed
        if not new_catalog.entries:
            store.set_pointer(CATALOG_POINTER, store.put(new_catalog, stage="catalog", stage_version="catalog.v1"))
            store.delete_pointer(INDEX_POINTER)
            return final_reports, new_catalog, None, None, removed
        manifest_ref, manifest = _build_index(store, chunk_sets, new_catalog, previous, idx_ref, index_cfg,
                                              embedder_name, target, written=written, fresh=fresh,
                                              full=rebuild, discard=stray_written)
        new_cat_ref = store.put(new_catalog, stage="catalog", stage_version="catalog.v1", inputs=(manifest_ref,))
        # Index first, catalog second: a crash in between leaves a catalog that still matches an index.
        store.set_pointer(INDEX_POINTER, manifest_ref)
        store.set_pointer(CATALOG_POINTER, new_cat_ref)
        return final_reports, new_catalog, manifest_ref, manifest, removed


@flow(name="ingest", persist_result=False, log_prints=False)
def ingest_flow(
    paths: list[str],
    doc_code: str | None = None,
    tenant: str = "default",
    project: str = "default",
    store: str | None = None,
    index_type: str | None = None,
    embedder: str = "minilm",
    ocr: bool = True,
    index_uri: str | None = None,
) -> IngestReport:
    """Ingest files/folders for one tenant/project and update the index. Returns the per-file report.

    ``index_uri``: where the index is to be (``flows.index_backends.index_target``: "faiss", http://host:port, a
    .db path); None takes this process's ``CITEBOUND_INDEX_URI`` (the edge passes the one it resolved; a
    deployment's worker reads its own). When it is a Milvus server, each file's worker writes its own chunks."""
    settings = Settings()
    store_root = str(Path(store or settings.home).resolve())
    st = _store(store_root)
    started = time.perf_counter()
    files = expand_paths(paths)
    extract_cfg = ExtractConfig(ocr_enabled=ocr and settings.ocr_enabled)
    clean_cfg, chunk_cfg, embed_cfg = CleanConfig(), ChunkConfig(), EmbedConfig()
    index_cfg = IndexConfig(index_type=index_type or settings.index_type)
    target = index_target(index_uri if index_uri is not None else settings.index_uri)
    # Configs are artifacts too, so a replay can re-run a stage with exactly the config it had.
    cfg_refs = {name: st.put(cfg, stage="config", stage_version="config.v1").sha256 for name, cfg in (
        ("extract_config", extract_cfg), ("clean_config", clean_cfg), ("chunk_config", chunk_cfg),
        ("embed_config", embed_cfg), ("index_config", index_cfg))}
    run = runs.RunRecorder(st, flow="ingest", parameters={
        "paths": json.dumps(paths), "doc_code": doc_code or "", "tenant": tenant, "project": project,
        "embedder": embedder, **cfg_refs})
    with st.writers():  # gc waits until this run has put what it wrote into the catalog
        cat_ref = st.get_pointer(CATALOG_POINTER)
        prev_entries = st.get(cat_ref, Catalog).by_key() if cat_ref else {}
        index_write, fresh = None, False
        if files:
            get_embedder(embedder)  # load once in this process before fanning out
            idx_ref = st.get_pointer(INDEX_POINTER)
            try:
                previous = st.get(idx_ref, IndexManifest) if idx_ref else None
            except (ArtifactCorruptError, ArtifactNotFoundError):
                previous = False  # a damaged manifest: no worker writes, the serialised step rebuilds the index
            if previous is not False:
                # A Milvus server: workers write their own chunks (a store's first index starts from an emptied
                # collection).
                index_write = prepare_worker_writes(store_root, previous, target, index_cfg, get_embedder(embedder))
                fresh = index_write is not None and idx_ref is None
        futures = []
        for path in files:
            prev = prev_entries.get(doc_key_of(tenant, project, path))
            futures.append(ingest_file_task.submit(
                store_root, path, doc_code, tenant, project, extract_cfg, clean_cfg, chunk_cfg, embed_cfg,
                embedder, prev.embedding_set_sha256 if prev else None, index_write,
                prev.chunk_set_sha256 if prev else None))
        reports: list[FileIngestReport] = []
        # A progress bar for people at a terminal; logs and JSON consumers get the final table/report only.
        progress = tqdm(futures, desc="ingest", unit="file", file=sys.stderr,
                        disable=len(futures) < 2 or not sys.stderr.isatty())
        written: set[str] = set()
        for fut in progress:
            report, steps, indexed = fut.result()
            if indexed and report.chunk_set_sha256:
                written.add(report.chunk_set_sha256)
            progress.set_postfix_str(Path(report.path).name[:40])
            reports.append(report)
            run.steps.extend(steps)
        final, catalog, manifest_ref, manifest, _ = update_catalog_and_index(
            st, reports, index_cfg=index_cfg, embedder_name=embedder, target=target, written=frozenset(written),
            fresh=fresh)
        outputs = [manifest_ref] if manifest_ref else []
        result = IngestReport(
            files=tuple(final), index_sha256=manifest_ref.sha256 if manifest_ref else None,
            catalog_sha256=st.get_pointer(CATALOG_POINTER).sha256 if st.get_pointer(CATALOG_POINTER) else None,
            n_vectors=manifest.n_vectors if manifest else 0, run_id=run.run_id,
            seconds=round(time.perf_counter() - started, 3),
        )
        report_ref = st.put(result.model_copy(update={"run_id": None}), stage="ingest_report",
                            stage_version=IngestReport.model_fields["kind"].default)
        run.finish(outputs=[*outputs, report_ref], status="completed")
    return result


def reindex(store_root: str, index_uri: str | None, *, index_type: str | None = None,
            ) -> tuple[ArtifactRef | None, IndexManifest | None]:
    """Rebuild the store's index on ``index_uri`` from the stored chunk sets and vectors (nothing is embedded, no
    model is loaded: the vectors' model is read from their embedding sets), under the store lock, and point the
    store at it. Returns the new manifest (None for an empty catalog)."""
    from flows.index_writes import stored_model

    st = _store(str(Path(store_root).resolve()))
    target = index_target(index_uri)
    with st.lock("index"):
        cat_ref = st.get_pointer(CATALOG_POINTER)
        catalog = st.get(cat_ref, Catalog) if cat_ref else Catalog()
        if not catalog.entries:
            return None, None
        idx_ref = st.get_pointer(INDEX_POINTER)
        previous = st.get(idx_ref, IndexManifest) if idx_ref else None
        index_cfg = IndexConfig(index_type=index_type or (previous.index_type if previous else "flat"))
        manifest_ref, manifest = _build_index(st, _ChunkSets(st), catalog, previous, idx_ref, index_cfg,
                                              "", target, full=True, identity=stored_model(st, catalog))
        new_cat_ref = st.put(catalog, stage="catalog", stage_version="catalog.v1", inputs=(manifest_ref,))
        st.set_pointer(INDEX_POINTER, manifest_ref)
        st.set_pointer(CATALOG_POINTER, new_cat_ref)
    return manifest_ref, manifest
