"""What the flows agree on about a store beyond the contracts: the names of its two pointers and the format of an
``EmbeddingSet``'s vectors blob.

A leaf: it imports nothing from ``flows/``, so the ingest flow, the index writes and views, the tasks and the edges
all take these from here and none of them has to import another for them (``tests/test_layers.py`` fails on an
import circle). It lives in ``flows/``, not ``contracts/``, because stage versions follow the code of
``contracts/``: moving these there would give every stage a new version, and every cached output a miss.
"""

from __future__ import annotations

import io

import numpy as np

__all__ = ["CATALOG_POINTER", "INDEX_POINTER", "vectors_to_bytes", "vectors_from_bytes"]

CATALOG_POINTER = "catalog/current"
"""The pointer to the store's current ``Catalog`` (moved by each ingest, delete and repair)."""
INDEX_POINTER = "index/current"
"""The pointer to the store's current ``IndexManifest`` (the one index over every tenant's documents)."""


def vectors_to_bytes(vectors: np.ndarray) -> bytes:
    """An ``EmbeddingSet``'s vectors blob: float32, C order, as ``.npy`` without pickles."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
    return buf.getvalue()


def vectors_from_bytes(data: bytes) -> np.ndarray:
    """The vectors of an ``EmbeddingSet``'s blob (``ValueError`` when the bytes are not a ``.npy``)."""
    return np.load(io.BytesIO(data), allow_pickle=False)
