"""BM25 with bm25s: sparse top-k, masks applied before ranking, in-memory persistence."""

from __future__ import annotations

import numpy as np
import pytest

from contracts.errors import ArtifactCorruptError
from stages.index.bm25 import LexicalIndex
from stages.text.normalise import search_terms

pytestmark = pytest.mark.unit

DOCS = [
    "Whoever commits theft shall be punished with imprisonment",
    "Whoever commits murder shall be punished with death",
    "Theft in a dwelling house; theft of cattle",
    "Defamation of a person by words",
]


def test_search_ranks_by_bm25_and_returns_only_matching_documents():
    index = LexicalIndex.build(DOCS)
    docs, scores = index.search(search_terms("theft"), k=10)
    assert set(docs.tolist()) == {0, 2}
    assert docs[0] == 2, "two mentions in a shorter document outrank one"
    assert np.all(np.diff(scores) <= 0)
    assert index.search(["unknownword"], k=5)[0].size == 0


def test_mask_removes_documents_before_the_top_k_is_taken():
    index = LexicalIndex.build(DOCS)
    allowed = np.array([True, True, False, True])
    docs, _ = index.search(search_terms("theft"), k=1, allowed=allowed)
    assert docs.tolist() == [0], "the best unmasked document fills the only slot"


def test_bytes_round_trip_scores_identically():
    index = LexicalIndex.build(DOCS)
    loaded = LexicalIndex.from_bytes(index.to_bytes())
    for query in ("theft", "punished death", "defamation words", "cattle house"):
        a, b = index.search(search_terms(query), 4), loaded.search(search_terms(query), 4)
        assert a[0].tolist() == b[0].tolist() and np.allclose(a[1], b[1])


def test_garbage_bytes_are_a_corrupt_artifact():
    with pytest.raises(ArtifactCorruptError):
        LexicalIndex.from_bytes(b"not an npz")
