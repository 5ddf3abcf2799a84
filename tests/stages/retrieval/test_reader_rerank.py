"""The reader's reranker in retrieval: it reorders the head of the fused list, its probability becomes the
confidence, section references stay first, scores stay monotonic, and off it changes nothing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from contracts import RetrieveConfig
from stages.retrieval.retrieve import rerank_text, retrieve
from tests.fakes import HashEmbedder
from tests.stages.index.test_search_index import make_chunk

pytestmark = pytest.mark.integration

TEXTS = {"323": ("Punishment for voluntarily causing hurt", "Whoever voluntarily causes hurt shall be punished"),
         "324": ("Voluntarily causing hurt by dangerous weapons or means", "Whoever causes hurt by a knife"),
         "379": ("Punishment for theft", "Whoever commits theft shall be punished"),
         "503": ("Criminal intimidation", "Whoever threatens another with any injury")}


class WordReranker:
    """Scores a passage by whether it holds a chosen word: a reranker whose preference the test knows."""

    model = "word-reranker"
    pool = 3

    def __init__(self, word: str) -> None:
        self.word = word
        self.seen: list[list[str]] = []

    def score(self, question: str, passages: Sequence[str], ranks: Sequence[int]) -> tuple[float, ...]:
        assert list(ranks) == list(range(1, len(passages) + 1))
        self.seen.append(list(passages))
        return tuple(0.9 if self.word in p else 0.1 for p in passages)


@pytest.fixture
def index(build_index):  # noqa: ANN201
    return build_index([make_chunk(f"Section {n}. {t}\n{body}", section=n, title=t) for n, (t, body) in TEXTS.items()],
                       HashEmbedder(dim=64))


def _ask(index, query: str, reranker=None, **cfg):  # noqa: ANN001, ANN202
    cfg.setdefault("reader_rerank", True)  # off by default; these tests are about what it does when on
    return retrieve(query, index, HashEmbedder(dim=64), RetrieveConfig(top_k=4, **cfg), tenant_id="t1",
                    project_id="p1", reranker=reranker)


def test_the_reranker_orders_its_pool_and_its_probability_is_the_confidence(index):
    query = "what is the punishment for causing hurt to someone?"
    plain = _ask(index, query)
    pooled = [i.source_id for i in plain.results[:3]]
    target = pooled[1]  # a candidate plain fusion did not put first
    reranker = WordReranker(f"Section {target.split('_')[1]}.")
    got = _ask(index, query, reranker)
    assert got.results[0].source_id == target
    assert got.results[0].confidence == pytest.approx(0.9) and "rerank" in got.results[0].matched_by
    assert len(reranker.seen[0]) == 3  # the pool, not the whole list
    scores = [i.score for i in got.results]
    assert scores == sorted(scores, reverse=True)
    # Off by config (the default), or with no reranker: plain fusion, untouched.
    assert [i.source_id for i in _ask(index, query, reranker, reader_rerank=False).results] == \
           [i.source_id for i in plain.results]


def test_a_named_section_stays_first_whatever_the_reranker_prefers(index):
    got = _ask(index, "IPC 379: what is the punishment for hurt?", WordReranker("Section 324."))
    assert got.results[0].source_id == "IPC_379_0"
    assert got.results[1].source_id == "IPC_324_0"


def test_a_chunk_that_does_not_show_its_heading_is_read_with_it():
    whole = make_chunk("Section 324. Voluntarily causing hurt by dangerous weapons\nWhoever ...", section="324",
                       title="Voluntarily causing hurt by dangerous weapons")
    later = make_chunk("(2) and shall also be liable to fine.", section="324",
                       title="Voluntarily causing hurt by dangerous weapons", n=1)
    assert rerank_text(whole) == whole.text
    assert rerank_text(later).startswith("Section 324. Voluntarily causing hurt by dangerous weapons\n(2)")
