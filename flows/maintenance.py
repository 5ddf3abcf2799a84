"""Store housekeeping: ``fsck`` says what does not verify and whom it affects, ``repair`` re-derives what can be
re-derived from stored source bytes and drops what cannot, ``gc`` removes what nothing current references.

fsck reads every object (hash, kind, schema), every blob (hash), every pointer, run record and stage-cache
entry (one naming an object the store does not hold is ``dangling``), and follows what is current (the catalog
and the store's index) down to each document's chunk set, its provenance (the artifacts its header's
``input_refs`` name, back to the source), its embedding set, its vectors and its source bytes. Each problem is
named ``kind:sha`` (``blob:sha``, ``pointer:NAME``, ...) with the documents and tenants it affects; the
catalog, the store's index and their pointers are ``shared``.

repair holds the writers' lock exclusively (no ingest runs meanwhile). It deletes every file that does not
verify (and, at the end, every stage-cache entry naming an object no longer there); restores the catalog if it
was lost (from the store's index, which lists the current chunk sets, else the newest stored catalog that
verifies); then for each document with something damaged or missing it finds the source bytes (the stored blob,
or the original file or upload copy when its sha256 still matches) and runs the document's ingest again on them
(stages whose outputs still verify come from the cache). A document without source bytes, or whose bytes no
longer ingest, is dropped. The index is then rebuilt from what verifies, and fsck runs again: the report says
what it still finds.

gc, also under the exclusive lock (it waits for running ingests; the upload copies and blobs of an ingest in
progress are never swept), keeps the current documents' source bytes, vectors and upload copies and the current
index's blobs, and removes every other blob, upload copy and stale temporary file. Runs recorded before it keep
their artifacts but not the index blobs of the index they searched: replaying one from ``retrieve`` then says
the blob is missing. With damage it cannot see past (a catalog or embedding set that does not verify) it
removes nothing and says to repair first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

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
    sha256_bytes,
)
from contracts.errors import ArtifactCorruptError, ArtifactKindError, ArtifactNotFoundError, CiteboundError
from contracts.maintenance import FsckReport, GcReport, RepairReport, StoreProblem
from contracts.store import ArtifactHeader, kind_of
from flows.index_views import document_name
from flows.ingest_flow import doc_key_of, ingest_file_task, update_catalog_and_index
from flows.store_layout import CATALOG_POINTER, INDEX_POINTER

__all__ = ["fsck", "repair", "gc", "STRAY_AGE_S"]

STRAY_AGE_S = 600.0  # a temporary file younger than this may still be being written
_Damage = (ArtifactCorruptError, ArtifactNotFoundError)
# The kinds whose models fsck keeps to follow references (the current kind of each: a bump follows it here).
_MODEL_KINDS = frozenset(kind_of(c) for c in (Catalog, EmbeddingSet, IndexManifest, ChunkSet, ExtractedDocument))


def _name(kind: str, sha: str) -> str:
    return f"{'blob' if kind == 'blob' else kind}:{sha[:12]}"


# ------------------------------------------------------------------------------------------ fsck


class _Scan:
    """Every object and blob read once: their health, and the headers of those that verify."""

    def __init__(self, store: ArtifactStore) -> None:
        self.objects: dict[tuple[str, str], str] = {}  # (kind, sha) -> "ok" | "corrupt" | "unreadable_kind"
        self.details: dict[tuple[str, str], str] = {}
        self.headers: dict[tuple[str, str], ArtifactHeader] = {}
        self.models: dict[tuple[str, str], object] = {}
        for kind, sha in store.object_names():
            try:
                header, model = store.load(ArtifactRef(kind=kind, sha256=sha))
            except ArtifactKindError as exc:
                self.objects[(kind, sha)], self.details[(kind, sha)] = "unreadable_kind", str(exc)
            except _Damage as exc:
                self.objects[(kind, sha)], self.details[(kind, sha)] = "corrupt", str(exc)
            else:
                self.objects[(kind, sha)] = "ok"
                self.headers[(kind, sha)] = header
                if kind in _MODEL_KINDS:
                    self.models[(kind, sha)] = model
        self.blobs: dict[str, str] = {}
        for sha, _size in store.blob_names():
            try:
                store.get_blob(sha)
                self.blobs[sha] = "ok"
            except _Damage:
                self.blobs[sha] = "corrupt"

    def ok(self, kind: str, sha: str) -> bool:
        return self.objects.get((kind, sha)) == "ok" if kind != "blob" else self.blobs.get(sha) == "ok"

    def provenance(self, kind: str, sha: str) -> Iterable[tuple[str, str]]:
        """The object and every artifact its headers name as inputs, transitively (as far as they verify)."""
        seen: set[tuple[str, str]] = set()
        todo = [(kind, sha)]
        while todo:
            item = todo.pop()
            if item in seen:
                continue
            seen.add(item)
            yield item
            header = self.headers.get(item)
            if header is not None:
                todo.extend((r.kind, r.sha256) for r in header.input_refs)


def fsck(store: ArtifactStore) -> FsckReport:
    """Verify every object, blob, pointer, run record and cache entry; name each problem with whom it affects."""
    started = time.perf_counter()
    scan = _Scan(store)
    problems: dict[str, StoreProblem] = {}
    affects: dict[tuple[str, str], set[tuple[str, str]]] = {}  # (kind, sha) -> {(document, tenant)}
    shared: set[tuple[str, str]] = set()
    wanted: dict[tuple[str, str], str] = {}  # what something current needs -> who needs it (for "missing")

    def need(kind: str, sha: str, who: str, doc: tuple[str, str] | None) -> None:
        wanted.setdefault((kind, sha), who)
        if doc is None:
            shared.add((kind, sha))
        else:
            affects.setdefault((kind, sha), set()).add(doc)

    pointers = store.list_pointers()
    catalog = _current(store, CATALOG_POINTER, "catalog.v1", scan, need, problems)
    manifest = _current(store, INDEX_POINTER, kind_of(IndexManifest), scan, need, problems)
    entries = catalog.entries if isinstance(catalog, Catalog) else ()
    for entry in entries:
        doc = (document_name(entry.doc_code, entry.filename), entry.tenant_id)
        for kind, sha in scan.provenance("chunk_set.v1", entry.chunk_set_sha256):
            need(kind, sha, f"the chunks of {doc[0]}", doc)
        need("embedding_set.v1", entry.embedding_set_sha256, f"the vectors of {doc[0]}", doc)
        emb = scan.models.get(("embedding_set.v1", entry.embedding_set_sha256))
        if isinstance(emb, EmbeddingSet):
            need("blob", emb.vectors_blob, f"the vectors of {doc[0]}", doc)
        need("blob", entry.doc_sha256, f"the source bytes of {doc[0]}", doc)
    if isinstance(manifest, IndexManifest):
        for _role, sha in manifest.blobs:
            need("blob", sha, "the store's index", None)
    tenants = tuple(sorted({e.tenant_id for e in entries}))

    def problem(kind: str, sha: str, what: str, detail: str) -> StoreProblem:
        docs = affects.get((kind, sha), set())
        is_shared = (kind, sha) in shared
        return StoreProblem(
            problem=what, name=_name(kind, sha), sha256=sha, documents=tuple(sorted({d for d, _ in docs})),
            tenants=tenants if is_shared else tuple(sorted({t for _, t in docs})), shared=is_shared,
            detail=detail or ("not used by any current document" if not docs and not is_shared else ""))

    for (kind, sha), health in scan.objects.items():
        if health != "ok":
            problems[_name(kind, sha)] = problem(kind, sha, health, scan.details[(kind, sha)])
    for sha, health in scan.blobs.items():
        if health != "ok":
            problems[_name("blob", sha)] = problem("blob", sha, "corrupt", "does not match its sha256")
    for (kind, sha), who in wanted.items():
        present = (kind, sha) in scan.objects if kind != "blob" else sha in scan.blobs
        if not present:
            problems[_name(kind, sha)] = problem(kind, sha, "missing", f"{who} needs it")
    for run_id in store.run_names():
        try:
            store.get_run(run_id)
        except _Damage as exc:
            problems[f"run:{run_id}"] = StoreProblem(problem="corrupt", name=f"run:{run_id}", sha256=run_id,
                                                     detail=str(exc))
    n_cache = 0
    for key, ref in store.cache_entries():
        n_cache += 1
        if ref is None:
            problems[f"cache:{key[:12]}"] = StoreProblem(problem="corrupt", name=f"cache:{key[:12]}", sha256=key,
                                                         detail="a stage-cache entry that does not parse")
        elif (ref.kind, ref.sha256) not in scan.objects:
            # A hit would be a miss (the store checks), but an entry naming nothing is damage all the same.
            problems[f"cache:{key[:12]}"] = StoreProblem(
                problem="dangling", name=f"cache:{key[:12]}", sha256=key,
                detail=f"a stage-cache entry naming {_name(ref.kind, ref.sha256)}, which the store does not hold")
    return FsckReport(
        problems=tuple(sorted(problems.values(), key=lambda p: (not p.shared, p.name))),
        n_objects=len(scan.objects), n_blobs=len(scan.blobs), n_pointers=len(pointers), n_runs=len(store.run_names()),
        n_cache_entries=n_cache, seconds=round(time.perf_counter() - started, 3))


def _current(store, pointer, kind, scan, need, problems):  # noqa: ANN001, ANN202
    """The object a current pointer names (None when there is none or it is damaged; problems noted)."""
    try:
        ref = store.get_pointer(pointer)
    except _Damage as exc:
        problems[f"pointer:{pointer}"] = StoreProblem(problem="corrupt", name=f"pointer:{pointer}", shared=True,
                                                      detail=str(exc))
        return None
    if ref is None:
        return None
    need(ref.kind, ref.sha256, f"pointer {pointer}", None)
    return scan.models.get((ref.kind, ref.sha256)) if ref.kind == kind else None


# ------------------------------------------------------------------------------------------ repair


def repair(store: ArtifactStore, *, embedder_name: str = "minilm", index_type: str | None = None, ocr: bool = True,
           on_wait: Callable[[], None] | None = None) -> RepairReport:
    """Delete what does not verify, re-derive the documents that need it from their stored source bytes, drop the
    ones that cannot be, rebuild the catalog and index; then fsck again (see the module docstring)."""
    from flows.settings import Settings

    started = time.perf_counter()
    settings = Settings()
    with store.writers(exclusive=True, on_wait=on_wait):
        before = fsck(store)
        removed = [_remove(store, p) for p in before.problems if p.problem in ("corrupt", "dangling")]
        rebuilt: list[str] = []
        catalog = _catalog_for_repair(store, rebuilt)
        reports: list[FileIngestReport] = []
        rederived: list[str] = []
        dropped: list[str] = []
        drop_keys: list[str] = []
        cfgs = (ExtractConfig(ocr_enabled=ocr and settings.ocr_enabled), CleanConfig(), ChunkConfig(), EmbedConfig())
        for entry in catalog.entries:
            if _intact(store, entry):
                continue
            name = document_name(entry.doc_code, entry.filename)
            if not _source_bytes(store, entry):
                dropped.append(f"{name}: its source bytes are lost; ingest the file again")
                drop_keys.append(entry.doc_key)
                continue
            previous = _forget_unusable_vectors(store, entry)
            report, _, _ = ingest_file_task.fn(
                str(store.root), entry.path, entry.doc_code, entry.tenant_id, entry.project_id, *cfgs, embedder_name,
                previous, stored_sha=entry.doc_sha256)
            if report.status == "error" or report.doc_key != entry.doc_key:
                dropped.append(f"{name}: its stored bytes no longer ingest ({report.reason})")
                drop_keys.append(entry.doc_key)
            else:
                reports.append(report)
                rederived.append(name)
        index_damaged = any(p.shared for p in before.problems)
        if reports or drop_keys or rebuilt or index_damaged or removed:
            update_catalog_and_index(store, reports, remove_keys=tuple(drop_keys),
                                     index_cfg=IndexConfig(index_type=index_type or _index_type(store, settings)),
                                     embedder_name=embedder_name, rebuild=True)
            rebuilt.append("index")
        # Cache entries naming what was deleted above (or was lost before): a hit is already a miss, but fsck
        # must find nothing pointing at nothing.
        removed += [_remove(store, StoreProblem(problem="dangling", name=f"cache:{key[:12]}", sha256=key))
                    for key, ref in list(store.cache_entries()) if ref is not None and not store.exists(ref)]
        after = fsck(store)
    return RepairReport(removed=tuple(removed), rederived=tuple(rederived), dropped=tuple(dropped),
                        rebuilt=tuple(rebuilt), remaining=after.problems,
                        seconds=round(time.perf_counter() - started, 3))


def _remove(store: ArtifactStore, problem: StoreProblem) -> str:
    kind, _, _ = problem.name.partition(":")
    if kind == "blob":
        store.delete_blob(problem.sha256 or "")
    elif kind == "pointer":
        store.delete_pointer(problem.name.split(":", 1)[1])
    elif kind == "run":
        store.delete_run(problem.sha256 or "")
    elif kind == "cache":
        store.delete_cache_entry(problem.sha256 or "")
    else:
        store.delete_object(kind, problem.sha256 or "")
    return problem.name


def _index_type(store: ArtifactStore, settings) -> str:  # noqa: ANN001
    try:
        ref = store.get_pointer(INDEX_POINTER)
        return store.get(ref, IndexManifest).index_type if ref else settings.index_type
    except _Damage:
        return settings.index_type


def _intact(store: ArtifactStore, entry: CatalogEntry) -> bool:
    """Whether everything the document needs verifies: chunk set, embedding set, vectors, source bytes."""
    try:
        store.get(f"chunk_set.v1:{entry.chunk_set_sha256}", ChunkSet)
        emb = store.get(f"embedding_set.v1:{entry.embedding_set_sha256}", EmbeddingSet)
        store.get_blob(emb.vectors_blob)
        store.get_blob(entry.doc_sha256)
    except _Damage:
        return False
    return True


def _source_bytes(store: ArtifactStore, entry: CatalogEntry) -> bool:
    """Whether the document's source bytes are in the store, restoring them from the original file or upload
    copy when its sha256 still matches."""
    if store.has_blob(entry.doc_sha256):
        try:
            store.get_blob(entry.doc_sha256)
            return True
        except _Damage:
            store.delete_blob(entry.doc_sha256)
    try:
        data = Path(entry.path).read_bytes()
    except OSError:
        return False
    if sha256_bytes(data) != entry.doc_sha256:
        return False
    store.put_blob(data, suffix=Path(entry.path).suffix.lower() or ".bin")
    return True


def _forget_unusable_vectors(store: ArtifactStore, entry: CatalogEntry) -> str | None:
    """The document's embedding set when its vectors still verify (the re-derived chunks reuse them); an embedding
    set whose vectors are gone is deleted, so that the embed stage's cache cannot hand it back."""
    try:
        emb = store.get(f"embedding_set.v1:{entry.embedding_set_sha256}", EmbeddingSet)
    except _Damage:
        return None
    try:
        store.get_blob(emb.vectors_blob)
    except _Damage:
        store.delete_object("embedding_set.v1", entry.embedding_set_sha256)
        return None
    return entry.embedding_set_sha256


def _catalog_for_repair(store: ArtifactStore, rebuilt: list[str]) -> Catalog:
    """The current catalog; when it is lost, one rebuilt from the store's index (its chunk sets are the current
    documents), else the newest stored catalog that verifies, else an empty one; pointed to as current."""
    try:
        ref = store.get_pointer(CATALOG_POINTER)
        if ref is not None:
            return store.get(ref, Catalog)
        if store.get_pointer(INDEX_POINTER) is None:
            return Catalog()  # a store nothing was ingested into
    except _Damage:
        pass
    catalog = _catalog_from_index(store)
    if catalog is None:
        newest: tuple[str, Catalog] | None = None
        for kind, sha in store.object_names():
            if kind == "catalog.v1":
                try:
                    header, found = store.load(ArtifactRef(kind=kind, sha256=sha), Catalog)
                except _Damage:
                    continue
                if newest is None or (header.created_at or "") > newest[0]:
                    newest = (header.created_at or "", found)
        catalog = newest[1] if newest else Catalog()
    store.set_pointer(CATALOG_POINTER, store.put(catalog, stage="catalog", stage_version="catalog.v1"))
    rebuilt.append("catalog")
    return catalog


def _catalog_from_index(store: ArtifactStore) -> Catalog | None:
    try:
        ref = store.get_pointer(INDEX_POINTER)
        manifest = store.get(ref, IndexManifest) if ref else None
    except _Damage:
        return None
    if manifest is None:
        return None
    embeddings: dict[str, str] = {}
    for kind, sha in store.object_names():
        if kind == "embedding_set.v1":
            try:
                emb = store.get(ArtifactRef(kind=kind, sha256=sha), EmbeddingSet)
            except _Damage:
                continue
            if emb.embedding_model == manifest.embedding_model:
                embeddings[emb.chunk_set_sha256] = sha
    entries = []
    for cs_sha in manifest.chunk_set_sha256s:
        try:
            header, chunk_set = store.load(f"chunk_set.v1:{cs_sha}", ChunkSet)
        except _Damage:
            continue
        embedded = next((embeddings[s] for s in (cs_sha, *(r.sha256 for r in header.input_refs)) if s in embeddings),
                        None)
        if embedded is None:
            continue
        src = chunk_set.source
        pages = _pages_of(store, header)
        entries.append(CatalogEntry(
            doc_key=doc_key_of(src.tenant_id, src.project_id, src.path), tenant_id=src.tenant_id,
            project_id=src.project_id, path=src.path, filename=src.filename, doc_code=src.doc_code,
            doc_sha256=src.sha256, chunk_set_sha256=cs_sha, embedding_set_sha256=embedded,
            n_chunks=len(chunk_set.chunks), n_pages=pages[0], n_ocr_pages=pages[1],
            quarantined=tuple(c.semantic_id for c in chunk_set.chunks if "injection_suspected" in c.flags)))
    return Catalog(entries=tuple(sorted(entries, key=lambda e: e.doc_key)))


def _pages_of(store: ArtifactStore, header: ArtifactHeader) -> tuple[int, int]:
    """(pages, OCR'd pages) of the extracted document a chunk set's provenance leads back to (0, 0 if lost)."""
    todo, seen = list(header.input_refs), set()
    while todo:
        ref = todo.pop()
        if ref.sha256 in seen:
            continue
        seen.add(ref.sha256)
        try:
            head, model = store.load(ref)
        except _Damage:
            continue
        if isinstance(model, ExtractedDocument):
            return len(model.pages), sum(p.origin == "ocr" for p in model.pages)
        todo.extend(head.input_refs)
    return 0, 0


# ------------------------------------------------------------------------------------------ gc


def gc(store: ArtifactStore, *, dry_run: bool = False, on_wait: Callable[[], None] | None = None,
       stray_age_s: float = STRAY_AGE_S) -> GcReport:
    """Remove unreferenced blobs, upload copies and stale temporary files (see the module docstring)."""
    started = time.perf_counter()
    with store.writers(exclusive=True, on_wait=on_wait):
        keep, uploads_keep, vectors_of = _referenced(store)
        report = {"blobs_removed": 0, "blob_bytes": 0, "uploads_removed": 0, "upload_bytes": 0, "stray_removed": 0,
                  "stray_bytes": 0, "blobs_kept": 0}
        doomed: set[str] = set()
        for sha, size in list(store.blob_names()):
            if sha in keep:
                report["blobs_kept"] += 1
                continue
            doomed.add(sha)
            report["blobs_removed"] += 1
            report["blob_bytes"] += size if dry_run else store.delete_blob(sha)
        if not dry_run:
            # An embedding set whose vectors went must not come back from the embed stage's cache.
            for key, ref in list(store.cache_entries()):
                if ref is not None and vectors_of(ref) in doomed:
                    store.delete_cache_entry(key)
        for path in store.upload_files():
            if path.name.startswith(".") or str(path) in uploads_keep:
                continue
            report["uploads_removed"] += 1
            report["upload_bytes"] += path.stat().st_size if dry_run else store.delete_file(path)
        for path in store.stray_files(stray_age_s):
            report["stray_removed"] += 1
            report["stray_bytes"] += path.stat().st_size if dry_run else store.delete_file(path)
    return GcReport(dry_run=dry_run, seconds=round(time.perf_counter() - started, 3), **report)


def _referenced(store: ArtifactStore) -> tuple[set[str], set[str], Callable[[ArtifactRef], str | None]]:
    """(blobs, upload copies) the current catalog and index reference, and a function naming an embedding set's
    vectors blob. Raises when damage hides what is referenced (gc then removes nothing)."""
    try:
        cat_ref = store.get_pointer(CATALOG_POINTER)
        catalog = store.get(cat_ref, Catalog) if cat_ref else Catalog()
        idx_ref = store.get_pointer(INDEX_POINTER)
        manifest = store.get(idx_ref, IndexManifest) if idx_ref else None
        keep = {sha for _, sha in manifest.blobs} if manifest else set()
        for e in catalog.entries:
            keep.add(e.doc_sha256)
            keep.add(store.get(f"embedding_set.v1:{e.embedding_set_sha256}", EmbeddingSet).vectors_blob)
    except CiteboundError as exc:
        raise ArtifactCorruptError(
            f"gc removes nothing while the store has damage that hides what is in use ({exc}): "
            "run `citebound fsck`, then `citebound repair`") from exc

    def vectors_of(ref: ArtifactRef) -> str | None:
        if ref.kind != "embedding_set.v1":
            return None
        try:
            return store.get(ref, EmbeddingSet).vectors_blob
        except _Damage:
            return None

    return keep, {e.path for e in catalog.entries}, vectors_of
