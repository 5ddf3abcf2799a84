"""The base every hand-off model derives from, and the one canonical JSON form used for hashing.

Content-derived identity: a model's sha256 is the sha256 of its canonical JSON (sorted keys, no
insignificant whitespace, UTF-8). Two equal models therefore always hash the same, whatever the
order their fields or mapping keys were given in.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["Contract", "canonical_json", "content_sha256", "sha256_bytes", "sha256_file", "sha256_text"]


class Contract(BaseModel):
    """Frozen, closed base for every contract: unknown fields are errors, instances are immutable."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes of a contract or plain JSON value (sorted keys, compact, UTF-8).

    >>> canonical_json({"b": 1, "a": [1, 2]})
    b'{"a":[1,2],"b":1}'
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex sha256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes, read in blocks (``hashlib.file_digest``)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def content_sha256(value: Any) -> str:
    """Hex sha256 of ``canonical_json(value)``: the content-derived id of any contract or config.

    >>> content_sha256({"a": 1, "b": 2}) == content_sha256({"b": 2, "a": 1})
    True
    """
    return sha256_bytes(canonical_json(value))
