"""SearchIndex: build/add/remove, blobs round trip, mismatch refusal, and hard tenant filters inside the search."""

from __future__ import annotations

import json

import numpy as np
import pytest

import stages.index.bm25 as bm25
import stages.text.normalise as normalise

from contracts import Chunk, ChunkProvenance, IndexConfig, sha256_text
from contracts.errors import ContractViolationError, IndexMismatchError
from stages.index.search_index import SearchFilter, SearchIndex, section_key
from tests.fakes import HashEmbedder

pytestmark = pytest.mark.integration  # real FAISS

TEXTS = {
    "378": "Theft. Whoever intending to take dishonestly any movable property out of the possession of any person moves that property is said to commit theft.",
    "379": "Punishment for theft. Whoever commits theft shall be punished with imprisonment which may extend to three years.",
    "302": "Punishment for murder. Whoever commits murder shall be punished with death or imprisonment for life.",
    "420": "Cheating and dishonestly inducing delivery of property shall be punished with imprisonment up to seven years.",
    "499": "Defamation. Whoever by words makes or publishes any imputation concerning any person is said to defame that person.",
}


def make_chunk(
    text: str,
    *,
    doc_code: str = "IPC",
    section: str | None = None,
    title: str | None = None,
    tenant: str = "t1",
    project: str = "p1",
    page: int = 1,
    flags: tuple[str, ...] = (),
    n: int = 0,
) -> Chunk:
    """A chunk as the ingestion stages would make it (ids derived from content + provenance)."""
    provenance = ChunkProvenance(
        doc_hash=sha256_text(f"{doc_code}-doc"),
        filename=f"{doc_code}.json",
        doc_code=doc_code,
        page=page,
        page_end=page,
        char_start=0,
        char_end=len(text),
        section_id=section,
        section_title=title,
        origin="json_record",
        tenant_id=tenant,
        project_id=project,
    )
    semantic = f"{doc_code}_{section or f'p{page}'}_{n}"
    return Chunk(
        semantic_id=semantic,
        chunk_id=sha256_text(text + provenance.model_dump_json()),
        content_sha256=sha256_text(text),
        text=text,
        provenance=provenance,
        flags=flags,
    )


def statute_chunks(tenant: str = "t1", project: str = "p1", doc_code: str = "IPC") -> list[Chunk]:
    return [make_chunk(t, doc_code=doc_code, section=s, tenant=tenant, project=project) for s, t in TEXTS.items()]


def build(chunks: list[Chunk], embedder: HashEmbedder, cfg: IndexConfig | None = None) -> SearchIndex:
    vectors = embedder.embed([c.text for c in chunks])
    return SearchIndex.build(
        chunks, vectors, embedding_model=embedder.model_name, model_revision=embedder.model_revision,
        cfg=cfg or IndexConfig(),
    )


def dense_ids(index: SearchIndex, embedder: HashEmbedder, query: str, tenant: str, project: str = "p1", k: int = 10,
              **filters) -> list[str]:
    allowed = index.compile_filter(SearchFilter(tenant, project, **filters))
    slots, _ = index.dense_search(embedder.embed([query])[0], k, allowed)
    return [index.chunk_at(int(s)).chunk_id for s in slots]


def bm25_ids(index: SearchIndex, terms: list[str], tenant: str, project: str = "p1", k: int = 10) -> list[str]:
    allowed = index.compile_filter(SearchFilter(tenant, project))
    slots, _ = index.lexical_search(terms, k, allowed)
    return [index.chunk_at(int(s)).chunk_id for s in slots]


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(dim=64)


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_build_finds_the_matching_chunk_first(embedder, index_type):
    chunks = statute_chunks()
    index = build(chunks, embedder, IndexConfig(index_type=index_type))
    assert index.chunks == tuple(chunks)
    assert dense_ids(index, embedder, TEXTS["302"], "t1")[0] == chunks[2].chunk_id
    assert bm25_ids(index, ["murder"], "t1")[0] == chunks[2].chunk_id


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_identical_documents_under_two_tenants_never_cross(embedder, index_type):
    mine, theirs = statute_chunks("t1"), statute_chunks("t2")
    index = build(mine + theirs, embedder, IndexConfig(index_type=index_type))
    mine_ids, theirs_ids = {c.chunk_id for c in mine}, {c.chunk_id for c in theirs}
    for query in TEXTS.values():
        # The other tenant holds an exact copy of each chunk: equal scores, and still never returned.
        assert set(dense_ids(index, embedder, query, "t1", k=50)) <= mine_ids
        assert set(dense_ids(index, embedder, query, "t2", k=50)) <= theirs_ids
        words = query.lower().replace(".", "").split()
        assert set(bm25_ids(index, words, "t1", k=50)) <= mine_ids
        assert set(bm25_ids(index, words, "t2", k=50)) <= theirs_ids
    assert dense_ids(index, embedder, TEXTS["379"], "t3") == []
    assert dense_ids(index, embedder, TEXTS["379"], "t1", project="other") == []


def test_tiny_tenant_inside_large_hnsw_index_still_gets_its_chunks(embedder):
    """A very selective tenant filter on HNSW falls back to exact search, so nothing of the tenant is missed."""
    rng = np.random.default_rng(7)
    noise = [make_chunk(f"noise document number {i} about {rng.integers(1_000_000)}", tenant="big", n=i,
                        section=str(i)) for i in range(400)]
    small = statute_chunks("tiny")
    index = build(noise + small, embedder, IndexConfig(index_type="hnsw", hnsw_m=8))
    found = dense_ids(index, embedder, TEXTS["499"], "tiny", k=5)
    assert set(found) == {c.chunk_id for c in small}
    assert found[0] == small[4].chunk_id


def test_doc_code_and_page_filters(embedder):
    chunks = [make_chunk("theft of cattle", doc_code="IPC", section="1", page=1),
              make_chunk("theft of cattle", doc_code="CrPC", section="1", page=5),
              make_chunk("theft of cattle", doc_code="CrPC", section="2", page=9)]
    index = build(chunks, embedder)
    assert set(dense_ids(index, embedder, "theft", "t1", doc_codes=("crpc",))) == {chunks[1].chunk_id, chunks[2].chunk_id}
    assert dense_ids(index, embedder, "theft", "t1", page_min=4, page_max=6) == [chunks[1].chunk_id]


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_add_and_remove_return_new_indexes_and_leave_the_original_alone(embedder, index_type):
    chunks = statute_chunks()
    index = build(chunks[:3], embedder, IndexConfig(index_type=index_type))
    grown = index.add(chunks[3:], embedder.embed([c.text for c in chunks[3:]]))
    assert len(index.chunks) == 3 and grown.chunks == tuple(chunks)
    again = grown.add(chunks[:1], embedder.embed([chunks[0].text]))
    assert again.chunks == tuple(chunks), "re-adding a chunk id is a no-op"
    shrunk = grown.remove([chunks[4].chunk_id, "unknown"])
    assert grown.chunks == tuple(chunks)
    assert shrunk.chunks == tuple(chunks[:4])
    assert chunks[4].chunk_id not in dense_ids(shrunk, embedder, TEXTS["499"], "t1")
    assert bm25_ids(shrunk, ["defame"], "t1") == []
    assert dense_ids(shrunk, embedder, TEXTS["420"], "t1")[0] == chunks[3].chunk_id


def test_hnsw_remove_uses_tombstones_then_rebuilds(embedder):
    chunks = statute_chunks()
    index = build(chunks, embedder, IndexConfig(index_type="hnsw"))
    one_gone = index.remove([chunks[0].chunk_id])
    assert one_gone.n_slots == 5 and len(one_gone.chunks) == 4  # tombstone: 1 dead slot of 5
    two_gone = one_gone.remove([chunks[1].chunk_id])
    assert two_gone.n_slots == 3 and len(two_gone.chunks) == 3  # > 25% dead: graph rebuilt from live vectors
    assert dense_ids(two_gone, embedder, TEXTS["302"], "t1")[0] == chunks[2].chunk_id


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_blob_round_trip_gives_identical_results(embedder, index_type):
    chunks = statute_chunks("t1") + statute_chunks("t2")
    index = build(chunks, embedder, IndexConfig(index_type=index_type)).remove([chunks[0].chunk_id])
    blobs = index.to_blobs()
    assert set(blobs) == {"faiss", "bm25", "ids", "params"} and all(isinstance(b, bytes) for b in blobs.values())
    loaded = SearchIndex.from_blobs(
        blobs, list(reversed(index.chunks)), embedding_model=embedder.model_name,
        model_revision=embedder.model_revision, dim=embedder.dim, cfg=IndexConfig(index_type=index_type),
        embedder=embedder,
    )
    assert loaded.chunks == index.chunks
    for query in TEXTS.values():
        for tenant in ("t1", "t2"):
            allowed_a = index.compile_filter(SearchFilter(tenant, "p1"))
            allowed_b = loaded.compile_filter(SearchFilter(tenant, "p1"))
            vector = embedder.embed([query])[0]
            a, b = index.dense_search(vector, 10, allowed_a), loaded.dense_search(vector, 10, allowed_b)
            assert a[0].tolist() == b[0].tolist() and np.allclose(a[1], b[1])
            words = query.lower().split()
            a, b = index.lexical_search(words, 10, allowed_a), loaded.lexical_search(words, 10, allowed_b)
            assert a[0].tolist() == b[0].tolist() and np.allclose(a[1], b[1])


@pytest.mark.parametrize(
    "other",
    [HashEmbedder(dim=64, model_name="another-model"), HashEmbedder(dim=32), HashEmbedder(dim=64, model_revision="2")],
    ids=["model", "dim", "revision"],
)
def test_loading_with_another_embedder_is_refused(embedder, other):
    index = build(statute_chunks(), embedder)
    with pytest.raises(IndexMismatchError, match="rebuild"):
        SearchIndex.from_blobs(
            index.to_blobs(), index.chunks, embedding_model=embedder.model_name,
            model_revision=embedder.model_revision, dim=embedder.dim, cfg=IndexConfig(), embedder=other,
        )


def test_manifest_that_disagrees_with_the_blobs_is_refused(embedder):
    index = build(statute_chunks(), embedder)
    liar = HashEmbedder(dim=64, model_name="liar")
    with pytest.raises(IndexMismatchError):
        SearchIndex.from_blobs(
            index.to_blobs(), index.chunks, embedding_model="liar", model_revision=embedder.model_revision,
            dim=64, cfg=IndexConfig(), embedder=liar,
        )


def test_loading_without_all_indexed_chunks_is_refused(embedder):
    index = build(statute_chunks(), embedder)
    with pytest.raises(ContractViolationError, match="not supplied"):
        SearchIndex.from_blobs(
            index.to_blobs(), index.chunks[1:], embedding_model=embedder.model_name,
            model_revision=embedder.model_revision, dim=embedder.dim, cfg=IndexConfig(), embedder=embedder,
        )


def test_vectors_of_wrong_shape_are_refused(embedder):
    chunks = statute_chunks()
    with pytest.raises(ContractViolationError):
        SearchIndex.build(chunks, np.zeros((2, 64), np.float32), embedding_model="m", model_revision="1",
                          cfg=IndexConfig())


def test_empty_index_builds_and_finds_nothing(embedder):
    index = SearchIndex.build([], np.zeros((0, 64), np.float32), embedding_model=embedder.model_name,
                              model_revision=embedder.model_revision, cfg=IndexConfig())
    assert index.chunks == () and dense_ids(index, embedder, "theft", "t1") == []
    assert bm25_ids(index, ["theft"], "t1") == []


@pytest.mark.parametrize(
    ("section_id", "doc_code", "expected"),
    [("420", "IPC", ("section", "420")), ("IPC_420", "IPC", ("section", "420")),
     ("Section_498A", "IPC", ("section", "498a")), ("Art_21", "COI", ("article", "21")),
     ("S12", "AILA", ("section", "12")), ("Preamble", "COI", ("other", "preamble"))],
)
def test_section_key_reads_the_usual_section_id_shapes(section_id, doc_code, expected):
    assert section_key(section_id, doc_code) == expected


# ----------------------------------------------------------------------------- self-describing saved index


def load(blobs: dict[str, bytes], index: SearchIndex, embedder: HashEmbedder, cfg: IndexConfig | None = None):
    return SearchIndex.from_blobs(
        blobs, index.chunks, embedding_model=embedder.model_name, model_revision=embedder.model_revision,
        dim=embedder.dim, cfg=cfg or IndexConfig(), embedder=embedder,
    )


def test_params_blob_records_bm25_parameters_normaliser_and_config(embedder):
    index = build(statute_chunks(), embedder, IndexConfig(bm25_title_repeat=3))
    params = json.loads(index.to_blobs()["params"])
    assert params["bm25"]["k1"] == 1.2 and params["bm25"]["b"] == 0.75 and params["bm25"]["method"] == "lucene"
    assert params["bm25"]["bm25s_version"] == bm25.bm25s.__version__
    assert params["normaliser"]["version"] == normalise.NORMALISER_VERSION
    assert params["normaliser"]["stopwords"] == len(normalise.SEARCH_STOPWORDS)
    assert params["index_config"]["bm25_title_repeat"] == 3 and params["index_config"]["index_type"] == "flat"


def _lexical_hits(index: SearchIndex, text: str) -> list[str]:
    """The chunk ids BM25 finds for ``text`` (tenant t1), best first."""
    slots, _ = index.lexical_search(normalise.search_terms(text), 10, index.compile_filter(SearchFilter("t1", "p1")))
    return [index.chunk_at(int(s)).chunk_id for s in slots]


def _stale_then_loaded(embedder, patch_old, *patches):
    """An index saved under an older normaliser or BM25 setting (``patches`` applied while building), then
    loaded by this code: (fresh build, loaded index, the differences saved_params names)."""
    from stages.index.saved_params import check_params

    with patch_old.context() as patch:
        for target, name, value in patches:
            patch.setattr(target, name, value)
        stale = build(statute_chunks(), embedder)
        blobs = stale.to_blobs()
    fresh = build(statute_chunks(), embedder)
    return fresh, stale, load(blobs, stale, embedder), check_params(blobs, IndexConfig())


def test_index_saved_with_other_bm25_parameters_gets_its_bm25_rebuilt(embedder, monkeypatch):
    fresh, _, loaded, differences = _stale_then_loaded(
        embedder, monkeypatch, (bm25, "_BM25_PARAMS", {"k1": 1.5, "b": 0.6, "method": "lucene"}))
    assert "bm25.k1: saved 1.5, now 1.2" in differences and "bm25.b: saved 0.6, now 0.75" in differences
    assert loaded.lexical.params == fresh.lexical.params
    for text in TEXTS.values():
        a = fresh.lexical_search(normalise.search_terms(text), 10, fresh.compile_filter(SearchFilter("t1", "p1")))
        b = loaded.lexical_search(normalise.search_terms(text), 10, loaded.compile_filter(SearchFilter("t1", "p1")))
        assert a[0].tolist() == b[0].tolist() and np.allclose(a[1], b[1]), "scored under this code's k1 and b"


def test_index_saved_with_another_stop_list_gets_its_bm25_rebuilt(embedder, monkeypatch):
    _, stale, loaded, differences = _stale_then_loaded(
        embedder, monkeypatch, (normalise, "SEARCH_STOPWORDS", normalise.SEARCH_STOPWORDS | {"whoever"}))
    now = len(normalise.SEARCH_STOPWORDS)
    assert any(d.startswith(f"normaliser.stopwords: saved {now + 1}, now {now}") for d in differences)
    assert _lexical_hits(stale, "whoever") == [], "the saved vocabulary has no 'whoever'"
    assert len(_lexical_hits(loaded, "whoever")) == 4, "rebuilt: every section saying 'whoever' is found"


def test_index_saved_with_another_stemmer_gets_its_bm25_rebuilt_even_without_a_version_bump(embedder, monkeypatch):
    _, stale, loaded, differences = _stale_then_loaded(
        embedder, monkeypatch, (normalise, "stem", lambda word: word))  # no stemming: "punished" stays "punished"
    assert [d.split(":")[0] for d in differences] == ["normaliser.probe_sha256"], "only the behaviour changed"
    # "punishes" is stemmed "punish" now; the unstemmed vocabulary has only "punishment" and "punished".
    assert _lexical_hits(stale, "punishes") == []
    assert len(_lexical_hits(loaded, "punishes")) == 3, "rebuilt: 'punished' in ss. 302, 379, 420 meets 'punishes'"
    assert np.array_equal(loaded.vectors_of(range(loaded.n_slots)), stale.vectors_of(range(stale.n_slots))), \
        "the vectors are the saved ones, nothing re-embedded"


def test_index_saved_under_another_normaliser_version_gets_its_bm25_rebuilt(embedder, monkeypatch):
    _, _, loaded, differences = _stale_then_loaded(embedder, monkeypatch, (normalise, "NORMALISER_VERSION", "normalise.v0"))
    assert differences == ("normaliser.version: saved 'normalise.v0', now 'normalise.v1'",)
    assert json.loads(loaded.to_blobs()["params"])["normaliser"]["version"] == "normalise.v1"


def test_index_saved_under_another_normaliser_and_another_config_is_refused(embedder, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(normalise, "NORMALISER_VERSION", "normalise.v0")
        index = build(statute_chunks(), embedder, IndexConfig(bm25_title_repeat=3))
        blobs = index.to_blobs()
    with pytest.raises(IndexMismatchError) as err:
        load(blobs, index, embedder)
    assert "index_config.bm25_title_repeat: saved 3, now 2" in str(err.value)
    assert "normaliser.version" in str(err.value), "every difference is named"


@pytest.mark.parametrize(
    ("saved", "loaded", "named"),
    [(IndexConfig(bm25_title_repeat=3), IndexConfig(), "index_config.bm25_title_repeat: saved 3, now 2"),
     (IndexConfig(index_type="hnsw", hnsw_m=16), IndexConfig(index_type="hnsw"), "index_config.hnsw_m: saved 16, now 32"),
     (IndexConfig(index_type="hnsw"), IndexConfig(index_type="hnsw", hnsw_ef_construction=40),
      "index_config.hnsw_ef_construction: saved 80, now 40")],
    ids=["title_repeat", "hnsw_m", "ef_construction"],
)
def test_index_saved_under_another_config_is_refused(embedder, saved, loaded, named):
    index = build(statute_chunks(), embedder, saved)
    with pytest.raises(IndexMismatchError) as err:
        load(index.to_blobs(), index, embedder, loaded)
    assert named in str(err.value)


def test_search_time_ef_search_may_differ(embedder):
    index = build(statute_chunks(), embedder, IndexConfig(index_type="hnsw", hnsw_ef_search=64))
    loaded = load(index.to_blobs(), index, embedder, IndexConfig(index_type="hnsw", hnsw_ef_search=200))
    assert loaded.cfg.hnsw_ef_search == 200 and loaded.chunks == index.chunks


def test_index_saved_without_params_is_refused_as_older(embedder):
    index = build(statute_chunks(), embedder)
    blobs = {k: v for k, v in index.to_blobs().items() if k != "params"}
    with pytest.raises(IndexMismatchError, match="older citebound"):
        load(blobs, index, embedder)
