"""What the store's housekeeping commands report: ``citebound fsck``, ``repair`` and ``gc`` (not stored)."""

from __future__ import annotations

from typing import Literal

from contracts._base import Contract

__all__ = ["StoreProblem", "FsckReport", "RepairReport", "GcReport"]


class StoreProblem(Contract):
    """One thing in the store that does not verify, or that something current needs and cannot be found.

    ``name`` is ``kind:sha`` (12 hex digits) for an object, ``blob:sha`` for a blob, ``pointer:NAME``,
    ``run:ID`` or ``cache:KEY``; ``dangling`` is a stage-cache entry naming an object the store does not hold. ``documents`` (``IPC (penal_code.pdf)``) and ``tenants`` are those it affects;
    ``shared`` marks what every tenant relies on (the catalog, the store's index, a pointer to them)."""

    problem: Literal["corrupt", "missing", "unreadable_kind", "dangling"]
    name: str
    sha256: str | None = None
    documents: tuple[str, ...] = ()
    tenants: tuple[str, ...] = ()
    shared: bool = False
    detail: str = ""


class FsckReport(Contract):
    problems: tuple[StoreProblem, ...] = ()
    n_objects: int = 0
    n_blobs: int = 0
    n_pointers: int = 0
    n_runs: int = 0
    n_cache_entries: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


class RepairReport(Contract):
    """``removed``: files that did not verify, deleted; ``rederived``: documents made again from their stored
    source bytes; ``dropped``: documents that could not be (with why), gone from the catalog and index;
    ``rebuilt``: shared things made again (``catalog``, ``index``); ``remaining``: what fsck finds afterwards."""

    removed: tuple[str, ...] = ()
    rederived: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    rebuilt: tuple[str, ...] = ()
    remaining: tuple[StoreProblem, ...] = ()
    seconds: float = 0.0


class GcReport(Contract):
    dry_run: bool = False
    blobs_removed: int = 0
    blob_bytes: int = 0
    uploads_removed: int = 0
    upload_bytes: int = 0
    stray_removed: int = 0
    stray_bytes: int = 0
    blobs_kept: int = 0
    seconds: float = 0.0
