"""The real all-MiniLM-L6-v2 adapter: shape, normalisation, batching, meaning, one model per process."""

from __future__ import annotations

import numpy as np
import pytest

from stages.adapters import st_embedder
from stages.adapters.st_embedder import SentenceTransformersEmbedder
from stages.ports import Embedder

pytestmark = pytest.mark.integration


def test_identity_is_the_model_and_package_revision(torch_embedder):
    assert isinstance(torch_embedder, Embedder)
    assert torch_embedder.model_name == "sentence-transformers/all-MiniLM-L6-v2" and torch_embedder.dim == 384
    version, _, digest = torch_embedder.model_revision.partition("+")
    assert version == "0.1.0" and len(digest) == 12
    assert SentenceTransformersEmbedder().model_revision == torch_embedder.model_revision


def test_vectors_are_normalised_float32_and_batch_independent(torch_embedder):
    texts = ["Whoever commits theft shall be punished.", "The mitochondria is the powerhouse of the cell.", "x"]
    vectors = torch_embedder.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([torch_embedder.embed([t]) for t in texts])
    assert np.allclose(vectors, one_by_one, atol=1e-5)
    assert torch_embedder.embed([]).shape == (0, 384)


def test_similar_meaning_scores_higher(torch_embedder):
    query, theft, biology = torch_embedder.embed(
        ["how long can someone be jailed for stealing?", "Punishment for theft: imprisonment up to three years.",
         "Photosynthesis converts light into chemical energy."]
    )
    assert float(query @ theft) > float(query @ biology) + 0.2


def test_model_loads_once_per_process(torch_embedder):
    loaded = st_embedder._loaded_model
    assert loaded is not None
    SentenceTransformersEmbedder().embed(["another instance"])
    assert st_embedder._loaded_model is loaded


def test_construction_loads_nothing(monkeypatch):
    monkeypatch.setattr(st_embedder, "_load_model", lambda: pytest.fail("model loaded too early"))
    embedder = SentenceTransformersEmbedder()
    assert embedder.dim == 384 and embedder.model_name.endswith("all-MiniLM-L6-v2")
