"""What a saved index was built under, and the refusal to load one built under anything else.

An index's ``params`` blob records the BM25 parameters its scores were computed with, the normaliser
(tokenizer, stop list, stemmer, version) that made its vocabulary, and the build-time ``IndexConfig``
(search-time fields excepted). ``check_params`` compares a saved blob with what this code would build under a
config. A BM25 vocabulary made by another normaliser (``stages.text.normalise``) or scored under other BM25
parameters silently misses every query term it stems differently, so its BM25 side is never searched: those
differences are returned, and the loader rebuilds BM25 from the chunks' texts (the FAISS vectors are kept,
nothing is re-embedded; the next ``citebound ingest`` saves the rebuilt index). Any other difference (the
FAISS build config) raises ``IndexMismatchError`` naming every one.

>>> params_mismatches({"bm25": {"k1": 1.5}}, {"bm25": {"k1": 1.2}})
['bm25.k1: saved 1.5, now 1.2']
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from contracts.config import IndexConfig
from contracts.errors import ContractViolationError, IndexMismatchError
from stages.index.bm25 import LexicalIndex
from stages.text.normalise import normaliser_spec

__all__ = ["index_params", "params_mismatches", "check_params"]

# IndexConfig fields that only steer a search: a saved index may be searched under other values.
_SEARCH_TIME_FIELDS = frozenset({"hnsw_ef_search"})
# Recorded for the reader, not compared: another bm25s release reads the same score matrix, and another
# PyStemmer release that stems the probe the same (normaliser.probe_sha256) makes the same vocabulary.
_INFORMATIONAL_PARAMS = frozenset({"bm25.bm25s_version", "normaliser.stemmer_library"})
# What only the BM25 side is built under: a difference there is mended by rebuilding BM25 from the chunks.
_LEXICAL_PARTS = ("bm25.", "normaliser.")
_PARAMS_FORMAT = "citebound.index_params.v1"


def index_params(cfg: IndexConfig, bm25: Mapping[str, object] | None = None) -> dict[str, object]:
    """The ``params`` blob's content for an index built under ``cfg`` (BM25 parameters default to this code's)."""
    config = cfg.model_dump(mode="json", exclude=set(_SEARCH_TIME_FIELDS))
    return {
        "format": _PARAMS_FORMAT,
        "bm25": dict(bm25 if bm25 is not None else LexicalIndex.default_params()),
        "normaliser": normaliser_spec(),
        "index_config": config,
    }


def params_mismatches(saved: Mapping[str, object], expected: Mapping[str, object]) -> list[str]:
    """``"bm25.k1: saved 1.5, now 1.2"`` for every compared leaf that differs (missing ones included)."""
    out: list[str] = []

    def walk(a: object, b: object, path: str) -> None:
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}" if path else str(key))
        elif a != b and path not in _INFORMATIONAL_PARAMS:
            out.append(f"{path}: saved {a!r}, now {b!r}")

    walk(saved, expected, "")
    return out


def check_params(blobs: Mapping[str, bytes], cfg: IndexConfig) -> tuple[str, ...]:
    """The differences between the saved ``params`` and this code + ``cfg`` when only the BM25 side differs
    (the caller rebuilds BM25 from the chunks; ``()`` when nothing differs). Raise IndexMismatchError, naming
    every difference, when anything else does, or when the index records no params."""
    if "params" not in blobs:
        raise IndexMismatchError(
            "the saved index does not record its BM25 parameters, normaliser or config (saved by an older "
            "citebound): rebuild the index (re-run `citebound ingest`)"
        )
    try:
        saved = json.loads(blobs["params"].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ContractViolationError(f"index params blob is not JSON: {exc}") from exc
    if not isinstance(saved, dict):
        raise ContractViolationError("index params blob is not a JSON object")
    differences = params_mismatches(saved, index_params(cfg))
    if all(d.startswith(_LEXICAL_PARTS) for d in differences):
        return tuple(differences)
    raise IndexMismatchError(
        "the saved index was built under other settings than this code and config: "
        + "; ".join(differences) + ". Rebuild the index (re-run `citebound ingest`)"
    )
