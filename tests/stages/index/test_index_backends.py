"""The IndexBackend port, on both backends: FAISS + BM25 in process and a Milvus collection on the session's
``milvus-lite server`` (``index_uri``/``build_index`` in tests/conftest.py run each test on both).

What is held: no method without a scope; zero wrong-tenant hits on plain, filtered and hybrid search, section
lookups and vector fetches, before and after deletes; writes refuse records outside their scope; a renamed chunk
is replaced; the two backends score BM25 alike. Milvus alone: the collection is checked against the schema and
the index parameters read back, and the ``hybrid_search(filter=)`` trap is caught.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from contracts import IndexConfig, IndexScope
from contracts.errors import ContractViolationError, IndexMismatchError, StageInvariantError
from stages.index.faiss_backend import FaissBm25Index
from stages.index.records import index_records
from stages.ports import IndexBackend
from tests.fakes import HashEmbedder
from tests.stages.index.test_search_index import TEXTS, make_chunk, statute_chunks

pytestmark = pytest.mark.integration  # real FAISS, a real Milvus-protocol server

A = IndexScope(tenant_id="tA", project_id="p1")
B = IndexScope(tenant_id="tB", project_id="p1")
A_OTHER_PROJECT = IndexScope(tenant_id="tA", project_id="p2")
SECRET = "TOP SECRET merger plan of tenant B: acquire the rival for seven crore"


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(dim=64)


def corpus() -> list:
    """The same statute texts for two tenants (and a second project of A), plus a secret only B holds."""
    secret = make_chunk(SECRET, doc_code="MEMO", section="1", tenant="tB", project="p1", page=4)
    return (statute_chunks("tA", "p1") + statute_chunks("tB", "p1") + statute_chunks("tA", "p2")
            + [make_chunk("Theft of a bicycle is theft too", doc_code="CrPC", section="7", tenant="tA", page=9),
               secret])


def tenants_of(hits) -> set[tuple[str, str]]:  # noqa: ANN001
    return {(e.chunk.provenance.tenant_id, e.chunk.provenance.project_id) for e in hits.entries}


def queries(embedder):  # noqa: ANN001, ANN201
    for text in (SECRET, "merger plan", "seven crore", *TEXTS.values()):
        yield embedder.embed([text])[0], text.lower().split()


# ------------------------------------------------------------------------------------------ the contract


def test_every_read_and_write_takes_a_scope_and_none_has_a_default():
    methods = [n for n, v in vars(IndexBackend).items() if callable(v) and not n.startswith("_")]
    assert set(methods) >= {"upsert", "delete", "delete_document", "dense_search", "lexical_search", "hybrid_search",
                            "section_search", "vectors", "doc_codes", "stats"}
    from stages.adapters.milvus_index import MilvusIndex

    for owner in (IndexBackend, FaissBm25Index, MilvusIndex):
        for name in methods:
            scope = inspect.signature(getattr(owner, name)).parameters.get("scope")
            assert scope is not None, f"{owner.__name__}.{name} takes no scope"
            assert scope.kind is inspect.Parameter.KEYWORD_ONLY and scope.default is inspect.Parameter.empty, \
                f"{owner.__name__}.{name}: scope must be a required keyword"
    with pytest.raises(ValueError):
        IndexScope(tenant_id="", project_id="p1")


def test_both_adapters_are_index_backends(build_index, embedder):
    index = build_index(statute_chunks("tA"), embedder)
    assert isinstance(index, IndexBackend)
    with pytest.raises(TypeError):
        index.dense_search(embedder.embed(["theft"])[0], 5)  # no scope: no search


def test_zero_wrong_tenant_hits_on_plain_filtered_and_hybrid_search(build_index, embedder):
    index = build_index(corpus(), embedder)
    narrowed = IndexScope(tenant_id="tA", project_id="p1", doc_codes=("ipc",), page_max=3)
    for scope in (A, A_OTHER_PROJECT, narrowed, IndexScope(tenant_id="nobody", project_id="p1")):
        for vector, terms in queries(embedder):
            for hits in (index.dense_search(vector, 50, scope=scope), index.lexical_search(terms, 50, scope=scope),
                         index.hybrid_search(vector, terms, 50, scope=scope)):
                assert tenants_of(hits) <= {(scope.tenant_id, scope.project_id)}
                assert all(SECRET != e.chunk.text for e in hits.entries)
                if scope is narrowed:
                    assert {e.chunk.provenance.doc_code for e in hits.entries} <= {"IPC"}
        refs = index.section_search("section", "1", None, scope=scope)
        assert tenants_of(refs) <= {(scope.tenant_id, scope.project_id)}
    # The secret is there, for its own tenant.
    found = index.dense_search(embedder.embed([SECRET])[0], 1, scope=B)
    assert found.entries[0].chunk.text == SECRET
    assert index.doc_codes(scope=A) == {"IPC", "CrPC"} and index.doc_codes(scope=B) == {"IPC", "MEMO"}
    assert index.doc_codes(scope=narrowed) == {"IPC"}


def test_a_tenant_id_cannot_close_its_quote(build_index, embedder):
    sly = IndexScope(tenant_id='tA" or tenant_id != "', project_id="p1")
    also = IndexScope(tenant_id="tA\\", project_id="p1")
    index = build_index(corpus(), embedder)
    for scope in (sly, also):
        for vector, terms in queries(embedder):
            assert len(index.dense_search(vector, 50, scope=scope)) == 0
            assert len(index.lexical_search(terms, 50, scope=scope)) == 0
            assert len(index.hybrid_search(vector, terms, 50, scope=scope)) == 0


def test_deletes_stay_in_their_scope_and_leave_no_hit_behind(build_index, embedder):
    chunks = corpus()
    index = build_index(chunks, embedder)
    a_ids = [c.chunk_id for c in chunks if c.provenance.tenant_id == "tA" and c.provenance.project_id == "p1"]
    # Asked in B's scope, A's chunk ids delete nothing.
    index.delete(a_ids, scope=B)
    assert index.stats(scope=A).n_in_scope == len(a_ids)
    doc_hash = chunks[0].provenance.doc_hash  # the IPC document (both tenants' copies share its hash)
    assert index.delete_document(doc_hash, scope=A) == len(statute_chunks())
    for vector, terms in queries(embedder):
        for hits in (index.dense_search(vector, 50, scope=A), index.lexical_search(terms, 50, scope=A),
                     index.hybrid_search(vector, terms, 50, scope=A)):
            assert {e.chunk.provenance.doc_code for e in hits.entries} <= {"CrPC"}
            assert tenants_of(hits) <= {("tA", "p1")}
    # B's copy of the same document is untouched, and so is A's other project.
    assert index.stats(scope=B).n_in_scope == len(statute_chunks()) + 1
    assert index.stats(scope=A_OTHER_PROJECT).n_in_scope == len(statute_chunks())
    assert len(index.section_search("section", "379", None, scope=A)) == 0
    assert len(index.section_search("section", "379", None, scope=B)) == 1


def test_writes_refuse_records_outside_their_scope(build_index, embedder):
    index = build_index(statute_chunks("tA"), embedder)
    stray = make_chunk("a chunk of tenant B", tenant="tB", section="9")
    with pytest.raises(ContractViolationError):
        index.upsert(index_records([stray], IndexConfig()), embedder.embed([stray.text]), scope=IndexScope(
            tenant_id="tA", project_id="p1"))
    assert index.stats(scope=IndexScope(tenant_id="tB", project_id="p1")).n_in_scope == 0


def test_vectors_are_fetched_only_inside_the_scope(build_index, embedder):
    index = build_index(corpus(), embedder)
    secret_hit = index.dense_search(embedder.embed([SECRET])[0], 1, scope=B)
    key = int(secret_hit.keys[0])
    assert np.allclose(index.vectors([key], scope=B)[0], embedder.embed([SECRET])[0], atol=1e-6)
    with pytest.raises(StageInvariantError):
        index.vectors([key], scope=A)


def test_upsert_replaces_a_chunk_whose_id_is_held(build_index, embedder):
    chunks = statute_chunks("tA")
    index = build_index(chunks, embedder)
    renamed = chunks[0].model_copy(update={"semantic_id": "IPC_378_0.1", "flags": ("injection_suspected",)})
    index.upsert(index_records([renamed], IndexConfig()), embedder.embed([renamed.text]), scope=A)
    hits = index.dense_search(embedder.embed([renamed.text])[0], 1, scope=A)
    assert hits.entries[0].chunk.semantic_id == "IPC_378_0.1"
    assert hits.entries[0].chunk.flags == ("injection_suspected",)
    assert index.stats(scope=A).n_in_scope == len(chunks)


def test_stats_name_the_backend_and_count_by_scope(build_index, embedder, index_uri):
    index = build_index(corpus(), embedder, IndexConfig(index_type="hnsw"))
    stats = index.stats(scope=A)
    assert stats.backend == ("faiss" if index_uri is None else "milvus")
    assert (stats.n_chunks, stats.n_in_scope, stats.index_type) == (len(corpus()), len(statute_chunks()) + 1, "hnsw")
    params = dict(stats.params)
    if index_uri is not None:  # read back from the engine, not what was asked for
        assert (params["dense.index_type"], params["dense.M"], params["dense.efConstruction"]) == ("HNSW", "32", "80")
        assert (params["sparse.metric_type"], params["sparse.bm25_k1"], params["sparse.bm25_b"]) == ("BM25", "1.2", "0.75")


def test_both_backends_score_bm25_and_dense_alike(milvus_server, embedder):
    """Over one tenant's project the two backends return the same chunks with the same scores: inner products,
    and BM25 with k1 1.2 and b 0.75 (milvus-lite's default k1 of 1.5 would not match). Over several tenants
    milvus-lite counts BM25's document frequencies per partition (per tenant and project), bm25s over the whole
    index: scores then differ, not which tenant's chunks come back."""
    from flows.index_backends import index_target, milvus_client
    from flows.index_writes import build_backend

    chunks = [c for c in corpus() if (c.provenance.tenant_id, c.provenance.project_id) == ("tA", "p1")]
    vectors = embedder.embed([c.text for c in chunks])
    faiss_index = build_backend(chunks, vectors, target=index_target(None), collection="unused", cfg=IndexConfig(),
                                embedding_model=embedder.model_name, model_revision=embedder.model_revision)
    milvus_index = build_backend(chunks, vectors, target=index_target(milvus_server), collection="test_parity",
                                 cfg=IndexConfig(), embedding_model=embedder.model_name,
                                 model_revision=embedder.model_revision)
    try:
        for vector, terms in queries(embedder):
            from stages.text.normalise import search_terms

            words = search_terms(" ".join(terms))
            for method, args in (("dense_search", (vector,)), ("lexical_search", (words,))):
                ours, theirs = (getattr(ix, method)(*args, 20, scope=A) for ix in (faiss_index, milvus_index))
                mine = {e.chunk.chunk_id: float(v) for e, v in zip(ours.entries, ours.scores, strict=True)}
                other = {e.chunk.chunk_id: float(v) for e, v in zip(theirs.entries, theirs.scores, strict=True)}
                assert mine.keys() == other.keys() and mine == pytest.approx(other, rel=1e-3, abs=1e-4), method
                # Best first on both (equal scores may come in another order: FAISS breaks ties by slot).
                assert np.allclose(ours.scores, theirs.scores, rtol=1e-3, atol=1e-4), method
    finally:
        milvus_client(milvus_server).drop_collection("test_parity")


# ------------------------------------------------------------------------------------------ Milvus alone


@pytest.fixture
def milvus_index(milvus_server, embedder):
    from flows.index_backends import index_target, milvus_client
    from flows.index_writes import build_backend

    chunks = corpus()
    index = build_backend(chunks, embedder.embed([c.text for c in chunks]), target=index_target(milvus_server),
                          collection="test_milvus_alone", cfg=IndexConfig(index_type="hnsw"),
                          embedding_model=embedder.model_name, model_revision=embedder.model_revision)
    yield index
    milvus_client(milvus_server).drop_collection("test_milvus_alone")


class _Spy:
    """A MilvusClient stand-in that records hybrid_search calls and passes everything on."""

    def __init__(self, client) -> None:  # noqa: ANN001
        self.client = client
        self.hybrid_calls: list[tuple[list, dict]] = []

    def hybrid_search(self, collection, reqs, **kwargs):  # noqa: ANN001, ANN201
        self.hybrid_calls.append((reqs, kwargs))
        return self.client.hybrid_search(collection, reqs, **kwargs)

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        return getattr(self.client, name)


def test_hybrid_search_puts_the_tenant_filter_inside_each_request(milvus_index, embedder):
    spy = _Spy(milvus_index._client)
    milvus_index._client = spy
    vector, terms = embedder.embed([SECRET])[0], ["merger", "plan", "seven", "crore"]
    hits = milvus_index.hybrid_search(vector, terms, 20, scope=A)
    assert tenants_of(hits) <= {("tA", "p1")} and len(hits) > 0
    (reqs, kwargs), = spy.hybrid_calls
    assert "filter" not in kwargs and "expr" not in kwargs
    assert len(reqs) == 2 and all('tenant_id == "tA"' in r.expr and 'project_id == "p1"' in r.expr for r in reqs)


def test_the_hybrid_search_filter_trap_is_caught(milvus_index, embedder):
    """The trap: ``hybrid_search(..., filter=...)`` with unfiltered requests. milvus-lite ignores that filter, so
    the other tenant's secret comes back; the adapter's own check refuses to return it."""
    from pymilvus import AnnSearchRequest, RRFRanker

    from stages.adapters.milvus_index import scope_filter

    class TrapIndex(type(milvus_index)):
        def hybrid_search(self, vector, terms, k, *, scope, rrf_k=60):  # noqa: ANN001, ANN202
            reqs = [AnnSearchRequest(data=[np.asarray(vector).tolist()], anns_field="dense",
                                     param={"metric_type": "IP"}, limit=k),
                    AnnSearchRequest(data=[" ".join(terms)], anns_field="sparse", param={"metric_type": "BM25"},
                                     limit=k)]
            result = self._client.hybrid_search(self.collection, reqs, ranker=RRFRanker(rrf_k), limit=k,
                                                output_fields=["key", "chunk_json", "kinds", "qualifier", "tenant_id",
                                                               "project_id", "doc_code", "page", "page_end"],
                                                filter=scope_filter(scope))
            return self._hits(result[0], scope, lexical=False)

    trap = TrapIndex(milvus_index._client, milvus_index.collection, embedding_model=embedder.model_name,
                     model_revision=embedder.model_revision, dim=embedder.dim, cfg=milvus_index.cfg,
                     fingerprint=milvus_index.fingerprint)
    with pytest.raises(StageInvariantError, match="filter leak"):
        trap.hybrid_search(embedder.embed([SECRET])[0], ["merger", "plan", "seven", "crore"], 20, scope=A)


def test_a_collection_that_does_not_fit_is_refused_naming_each_difference(milvus_server, milvus_index, embedder):
    from pymilvus import DataType, MilvusClient

    from flows.index_backends import milvus_client
    from stages.adapters.milvus_index import MilvusIndex

    client = milvus_client(milvus_server)
    kwargs = dict(embedding_model=embedder.model_name, model_revision=embedder.model_revision, dim=embedder.dim,
                  cfg=IndexConfig(index_type="hnsw"), fingerprint=milvus_index.fingerprint, create=False)
    MilvusIndex.open(client, "test_milvus_alone", **kwargs)  # the collection just built fits
    with pytest.raises(IndexMismatchError, match="citebound.fingerprint"):
        MilvusIndex.open(client, "test_milvus_alone", **{**kwargs, "fingerprint": "another normaliser"})
    with pytest.raises(IndexMismatchError, match="dim"):
        MilvusIndex.open(client, "test_milvus_alone", **{**kwargs, "dim": 32})
    with pytest.raises(IndexMismatchError, match="index on dense: type HNSW, now FLAT"):
        MilvusIndex.open(client, "test_milvus_alone", **{**kwargs, "cfg": IndexConfig(index_type="flat")})
    with pytest.raises(IndexMismatchError, match="does not exist"):
        MilvusIndex.open(client, "test_no_such_collection", **kwargs)

    # The same schema with its index parameters given the way pymilvus 3 sends a plain dict: flattened.
    # milvus-lite keeps none of them (an HNSW with its defaults, BM25 with k1 1.5): the check says so.
    probe = MilvusIndex(client, "test_flattened", **{k: v for k, v in kwargs.items() if k != "create"})
    probe._create()
    schema = client.describe_collection("test_flattened")
    client.drop_collection("test_flattened")
    try:
        flat_schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        for field in schema["fields"]:
            params = dict(field.get("params") or {})
            extra = {k: field[k] for k in ("is_primary", "is_partition_key") if field.get(k)}
            if field["name"] == "terms":
                extra.update(enable_analyzer=True, analyzer_params={"tokenizer": "standard"})
            if "max_length" in params:
                extra["max_length"] = int(params["max_length"])
            if "dim" in params:
                extra["dim"] = int(params["dim"])
            flat_schema.add_field(field["name"], DataType(field["type"]), **extra)
        from pymilvus import Function, FunctionType

        flat_schema.add_function(Function(name="terms_bm25", function_type=FunctionType.BM25,
                                          input_field_names=["terms"], output_field_names=["sparse"]))
        index_params = client.prepare_index_params()
        index_params.add_index(field_name="dense", index_type="HNSW", metric_type="IP",
                               params={"M": 32, "efConstruction": 80})
        index_params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                               params={"bm25_k1": 1.2, "bm25_b": 0.75})
        client.create_collection("test_flattened", schema=flat_schema, index_params=index_params,
                                 properties=probe._properties())
        with pytest.raises(IndexMismatchError) as refused:
            MilvusIndex.open(client, "test_flattened", **kwargs)
        for name in ("M", "efConstruction", "bm25_k1"):
            assert f" {name} " in str(refused.value), str(refused.value)
    finally:
        if client.has_collection("test_flattened"):
            client.drop_collection("test_flattened")
