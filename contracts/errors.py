"""One root error for every surprise in citebound. Expected outcomes (a refusal, a failed check) are data."""

from __future__ import annotations

import errno
import os
from typing import Literal

__all__ = [
    "CiteboundError",
    "ContractViolationError",
    "ArtifactNotFoundError",
    "ArtifactCorruptError",
    "ArtifactKindError",
    "DocumentDamagedError",
    "StorageError",
    "StageInvariantError",
    "IngestError",
    "IngestReason",
    "OcrUnavailableError",
    "IndexMismatchError",
    "IndexUnavailableError",
    "LLMTransportError",
    "VerifierLoadError",
    "ReaderModelError",
    "ConfigError",
]


class CiteboundError(Exception):
    """Root of every error citebound raises on purpose."""


class ContractViolationError(CiteboundError):
    """Raised by the artifact store or a stage when data does not fit its contract."""


class ArtifactNotFoundError(CiteboundError):
    """Raised by the artifact store when a referenced artifact, blob, pointer or run does not exist."""


class ArtifactCorruptError(CiteboundError):
    """Raised by the artifact store when an artifact's bytes do not match its hash, kind or schema."""


class ArtifactKindError(ArtifactCorruptError):
    """Raised by the artifact store for an artifact of a kind this version cannot read (retired, unmigratable, newer)."""


class DocumentDamagedError(ArtifactCorruptError):
    """Raised when work needs a document whose stored artifacts do not verify (until ``citebound repair`` runs).

    ``documents`` names them for people (doc code and file name), ``objects`` the artifacts that failed
    (``kind:sha``); neither carries a server path."""

    def __init__(self, documents: tuple[str, ...], objects: tuple[str, ...]) -> None:
        self.documents, self.objects = documents, objects
        which = ", ".join(documents)
        super().__init__(
            f"document{'s' if len(documents) > 1 else ''} {which} {'are' if len(documents) > 1 else 'is'} damaged "
            f"({', '.join(objects)} does not verify) and cannot be used until `citebound repair` runs")


_STORAGE_CAUSES = {
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


class StorageError(CiteboundError):
    """Raised by the artifact store when the file system refuses a read or write: read-only, full, no permission.

    ``str()`` names the action and the cause without the path (it may reach an API caller or a refusal);
    ``path`` and ``describe()`` (``cannot write PATH: read-only file system``) are for the operator.

    >>> e = StorageError("write", "/s/objects/x.json", OSError(errno.ENOSPC, "No space left on device"))
    >>> str(e), e.describe(), e.no_space
    ('the store cannot write: no space left on device', 'cannot write /s/objects/x.json: no space left on device', True)
    """

    def __init__(self, action: str, path: object, exc: OSError) -> None:
        self.action, self.path, self.errno = action, str(path), exc.errno
        self.cause = _STORAGE_CAUSES.get(exc.errno or 0) or (os.strerror(exc.errno) if exc.errno else str(exc))
        super().__init__(f"the store cannot {action}: {self.cause}")

    @property
    def no_space(self) -> bool:
        return self.errno in (errno.ENOSPC, errno.EDQUOT)

    def describe(self) -> str:
        return f"cannot {self.action} {self.path}: {self.cause}"


class StageInvariantError(CiteboundError):
    """Raised by a stage when its own output would break an invariant it promises (a bug, not bad input)."""


IngestReason = Literal[
    "missing",
    "empty_file",
    "encrypted",
    "corrupt",
    "not_a_pdf",
    "zero_pages",
    "unsupported_type",
    "bad_encoding",
    "too_large",
    "no_text",
    "bad_json",
]


class IngestError(CiteboundError):
    """Raised by extraction for one input file that cannot be ingested; carries a reason code."""

    def __init__(self, reason: IngestReason, message: str, *, filename: str | None = None) -> None:
        self.reason: IngestReason = reason
        self.filename = filename
        where = f"{filename}: " if filename else ""
        super().__init__(f"[{reason}] {where}{message}")


class OcrUnavailableError(CiteboundError):
    """Raised by an OCR adapter when its program or the requested language's data is not installed."""


class IndexMismatchError(CiteboundError):
    """Raised when a stored index was built with another embedding model or dimension than the one loaded."""


class IndexUnavailableError(CiteboundError):
    """Raised by the Milvus adapter when the index server stays unreachable after its bounded reconnects, or a
    call that is not safe to send twice met a dropped connection (``stages.adapters.milvus_calls``)."""


class LLMTransportError(CiteboundError):
    """Raised by an LLM backend when the server cannot be reached, times out or answers malformed data."""


class ConfigError(CiteboundError):
    """Raised when settings or CLI options are invalid (unknown backend, bad --set key, missing model)."""


class VerifierLoadError(CiteboundError):
    """Raised by the verifier adapter when its model folder is missing, incomplete or fails its hash check."""


class ReaderModelError(CiteboundError):
    """Raised when a reader model (the fine-tuned retriever or the reranker) is missing, incomplete or fails its
    hash check: the message names the file; there is no silent fallback to another model."""
