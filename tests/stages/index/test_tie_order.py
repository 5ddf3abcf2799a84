"""Equal scores come out in the same order on both backends: chunk id order. Two documents holding the same
text (a PDF and the text it was made from) give chunks that tie exactly on dense and BM25 scores; FAISS broke
the tie by slot, Milvus by its key, so each backend put another twin first (another citation, and another
confidence). Real FAISS + bm25s and the session's ``milvus-lite server``."""

from __future__ import annotations

import uuid

import pytest

from contracts import IndexConfig, IndexScope
from flows.index_backends import index_target, milvus_client
from flows.index_writes import build_backend
from tests.fakes import HashEmbedder
from tests.stages.index.test_search_index import make_chunk

pytestmark = pytest.mark.integration

TEXTS = ("Whoever cheats shall be punished with imprisonment for a term which may extend to one year",
         "Whoever commits theft shall be punished with imprisonment which may extend to three years",
         "The minimum rates of wages shall be fixed by the appropriate Government")
SCOPE = IndexScope(tenant_id="t1", project_id="p1")


def test_twin_chunks_rank_in_chunk_id_order_on_both_backends(milvus_server):
    # Twins under eight doc codes, added in an order unrelated to their chunk ids.
    chunks = [make_chunk(text, doc_code=f"Doc{d}", section=str(i + 1)) for d in (5, 2, 7, 0, 3, 6, 1, 4)
              for i, text in enumerate(TEXTS)]
    embedder = HashEmbedder(dim=64)
    vectors = embedder.embed([c.text for c in chunks])
    name = f"test_{uuid.uuid4().hex[:16]}"
    backends = {uri: build_backend(chunks, vectors, target=index_target(uri), collection=name, cfg=IndexConfig(),
                                   embedding_model=embedder.model_name, model_revision=embedder.model_revision)
                for uri in (None, milvus_server)}
    try:
        query = embedder.embed([TEXTS[0]])[0]
        terms = ["cheat", "punish", "imprison"]
        for k in (3, 8, 12):  # a cut inside a run of twins, at its end, and past it
            orders = {}
            for uri, index in backends.items():
                dense = index.dense_search(query, k, scope=SCOPE)
                lexical = index.lexical_search(terms, k, scope=SCOPE)
                orders[uri] = ([e.chunk.chunk_id for e in dense.entries], [e.chunk.chunk_id for e in lexical.entries])
                twins = sorted(c.chunk_id for c in chunks if c.text == TEXTS[0])
                assert orders[uri][0][:min(k, 8)] == twins[:min(k, 8)], "dense ties in chunk id order"
                assert orders[uri][1][:min(k, 8)] == twins[:min(k, 8)], "BM25 ties in chunk id order"
            assert orders[None] == orders[milvus_server]
    finally:
        milvus_client(milvus_server).drop_collection(name)
