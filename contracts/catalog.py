"""What the store holds: the catalog of ingested documents, and the request that starts an answer run."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract

__all__ = ["CatalogEntry", "Catalog", "AnswerRequest", "FileIngestReport", "IngestReport"]


class CatalogEntry(Contract):
    """One ingested document of one tenant/project. ``doc_key`` identifies it across versions of its bytes."""

    doc_key: str
    tenant_id: str
    project_id: str
    path: str
    filename: str
    doc_code: str
    doc_sha256: str
    chunk_set_sha256: str
    embedding_set_sha256: str
    n_chunks: int = Field(ge=0)
    n_pages: int = Field(ge=0)
    n_ocr_pages: int = Field(ge=0)
    quarantined: tuple[str, ...] = ()


class Catalog(Contract):
    """Every document currently in the index, sorted by doc_key (so equal catalogs hash equal)."""

    kind: Literal["catalog.v1"] = "catalog.v1"
    entries: tuple[CatalogEntry, ...] = ()

    def by_key(self) -> dict[str, CatalogEntry]:
        return {e.doc_key: e for e in self.entries}


class AnswerRequest(Contract):
    """The question of an answer run, with everything that scopes it (the first artifact of every answer run)."""

    kind: Literal["answer_request.v1"] = "answer_request.v1"
    query: str = Field(min_length=1, max_length=4000)
    tenant_id: str = "default"
    project_id: str = "default"
    top_k: int = Field(default=5, gt=0, le=100)


class FileIngestReport(Contract):
    """What happened to one input file in an ingest run. Failures are data: ``status`` + ``reason``.
    ``duplicate``: its text is already stored as ``duplicate_of`` (a file name) in the tenant's project, so it was
    not added (``flows.duplicates``)."""

    path: str
    status: Literal["ingested", "unchanged", "duplicate", "error"]
    reason: str | None = None
    message: str | None = None
    doc_code: str | None = None
    doc_key: str | None = None
    n_pages: int = 0
    n_ocr_pages: int = 0
    n_chunks: int = 0
    quarantined: tuple[str, ...] = ()
    n_front_matter: int = 0
    """Chunks flagged ``front_matter`` (a table of contents, an arrangement of sections): kept, never evidence."""
    n_exercise: int = 0
    """Chunks flagged ``exercise`` (an exercise, an activity, an in-text question): kept, never evidence."""
    notes: tuple[str, ...] = ()
    """What extraction found and did, one line each: a shifted font reversed, pages read by OCR in another language,
    pages left out and why, blank pages (``ExtractedDocument.warnings``)."""
    id_clashes: tuple[str, ...] = ()
    seconds: float = 0.0
    chunk_set_sha256: str | None = None
    embedding_set_sha256: str | None = None
    duplicate_of: str | None = None


class IngestReport(Contract):
    kind: Literal["ingest_report.v2"] = "ingest_report.v2"
    files: tuple[FileIngestReport, ...]
    index_sha256: str | None = None
    catalog_sha256: str | None = None
    n_vectors: int = 0
    removed: tuple[str, ...] = ()
    run_id: str | None = None
    seconds: float = 0.0
