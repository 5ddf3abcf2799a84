"""A reader model's folder read and checked: its ``card.json`` and every file it names, by sha256.

Both reader models (``reader_embedder``, ``onnx_reranker``) load through here, so a missing, altered or extra
model file is one ``ReaderModelError`` naming the file, for either.
"""

from __future__ import annotations

from pathlib import Path

from contracts._base import sha256_file
from contracts.errors import ReaderModelError
from contracts.reader import ReaderModelCard

__all__ = ["read_card", "checked_files"]


def read_card(folder: Path) -> ReaderModelCard:
    path = Path(folder) / "card.json"
    try:
        return ReaderModelCard.model_validate_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise ReaderModelError(f"reader model card missing: card.json in {Path(folder).name}/") from exc
    except ValueError as exc:
        raise ReaderModelError(f"reader model card unreadable: {Path(folder).name}/card.json: {str(exc)[:200]}") from exc


def checked_files(folder: Path, card: ReaderModelCard) -> dict[str, Path]:
    """{file name: path} of the card's files, each present and hashing to the card's sha256."""
    out = {}
    for name, sha in card.files:
        path = Path(folder) / name
        if not path.is_file():
            raise ReaderModelError(f"reader model file missing: {Path(folder).name}/{name}")
        if sha256_file(path) != sha:
            raise ReaderModelError(f"reader model file corrupt: {Path(folder).name}/{name} does not match its "
                                   f"sha256 {sha[:12]}…")
        out[name] = path
    return out
