"""One root error for every surprise in citebound. Expected outcomes (a refusal, a failed check) are data."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "CiteboundError",
    "ContractViolationError",
    "ArtifactNotFoundError",
    "ArtifactCorruptError",
    "ArtifactKindError",
    "StageInvariantError",
    "IngestError",
    "IngestReason",
    "IndexMismatchError",
    "LLMTransportError",
    "VerifierLoadError",
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


class IndexMismatchError(CiteboundError):
    """Raised when a stored index was built with another embedding model or dimension than the one loaded."""


class LLMTransportError(CiteboundError):
    """Raised by an LLM backend when the server cannot be reached, times out or answers malformed data."""


class ConfigError(CiteboundError):
    """Raised when settings or CLI options are invalid (unknown backend, bad --set key, missing model)."""


class VerifierLoadError(CiteboundError):
    """Raised by the verifier adapter when its model folder is missing, incomplete or fails its hash check."""
