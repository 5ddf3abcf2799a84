"""Retrieval suite: recall@1/5/10, MRR and nDCG@10 of the shipped default ``RetrieveConfig`` (hybrid).

* **AILA 2019** (``aila2019-statutes``): 50 long fact-pattern queries over 197 statutes, TREC qrels.
* **IPC questions** (``bench/data/ipc_questions.jsonl``): each question has the one IPC section that answers
  it, asked over all seven acts of ``indian-acts-json`` (1,931 sections), so "IPC 420" must beat CrPC 420. The
  ``dev`` set (75) was used to tune retrieval. The sets written later are pooled in two: ``heldout`` ...
  ``heldout6`` (126 questions, whose misses were studied after their first run: reported, not held out) and
  ``heldout7`` ... ``heldout9`` (72 questions, never used to choose a shipped default: the held split); a table
  breaks both down per set.

A ranking counts a section once, at its best rank (``ranked_ids``); ``top_k`` is raised to 10 so R@10 and
nDCG@10 can be measured, nothing else is changed. Per-query scores go through ``evaluation.metrics`` and
``MetricMaker.mean``, so the bootstrap resamples queries. BM25 alone and dense alone are the baselines, in a
table beside hybrid. ``bench/retrieval_eval.py`` scores its tuning grids with the same functions.

The ci subset embeds only what fits in a minute from a cold cache: AILA whole, and the IPC questions over the
IPC act alone (575 sections, not 1,931: fewer distractors, and other BM25 statistics, so its IPC figures are
not the full run's; the metric ids are the same, the dataset text says which corpus).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from contracts import Chunk, RetrieveConfig
from contracts.errors import ConfigError
from contracts.evaluation import Metric, ReportTable, SuiteReport
from evaluation.corpora import (
    ACTS,
    PROJECT,
    TENANT,
    MemoEmbedder,
    act_chunks,
    aila_chunks,
    aila_queries,
    build_index,
    ipc_queries,
)
from evaluation.metrics import MetricMaker, ndcg_at_k, recall_at_k, reciprocal_rank
from evaluation.splits import IPC_HELD, IPC_LATER
from evaluation.suite import AnsweredItem, EvalContext, SuiteOutput

__all__ = ["IPC_HELD", "IPC_LATER", "MEASURES", "mean_scores", "query_scores", "ranked_ids", "ranking_metrics", "run"]

SUITE = "retrieval"
MEASURES = ("R@1", "R@5", "R@10", "MRR", "nDCG@10")
MODES = ("bm25", "dense", "hybrid")
# The IPC question sets written after the dev tuning (bench/retrieval_eval.py says what each was used for), in two
# pools (evaluation.splits): "later" sets whose misses were studied afterwards (no longer clean), and "held" sets
# never used to choose anything the default configuration ships (heldout7 was checked once after the confidence
# fit; heldout8 was a baseline run; heldout9 the rerank judge, and the rerank is off by default).

Query = tuple[str, str, set[str]]


def ranked_ids(index, embedder, query: str, cfg: RetrieveConfig) -> list[str]:  # noqa: ANN001
    """``<doc_code>_<section_id>`` of each result, best first, each section once at its best rank (so CrPC 420
    never counts as IPC 420, and a section split in several chunks counts once)."""
    from stages.retrieval.retrieve import retrieve

    result = retrieve(query, index, embedder, cfg, tenant_id=TENANT, project_id=PROJECT)
    return list(dict.fromkeys(f"{item.metadata.doc_code}_{item.metadata.section_id}" for item in result.results))


def query_scores(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    """One query's R@1/5/10, reciprocal rank (within 10) and nDCG@10."""
    return {"R@1": recall_at_k(ranked, relevant, 1), "R@5": recall_at_k(ranked, relevant, 5),
            "R@10": recall_at_k(ranked, relevant, 10), "MRR": reciprocal_rank(ranked, relevant, 10),
            "nDCG@10": ndcg_at_k(ranked, relevant, 10)}


def mean_scores(runs: Sequence[tuple[Sequence[str], set[str]]]) -> dict[str, float]:
    """The measures averaged over queries (point values only: for tables and the bench's tuning grids)."""
    per_query = [query_scores(ranked, relevant) for ranked, relevant in runs]
    return {m: sum(q[m] for q in per_query) / len(per_query) if per_query else float("nan") for m in MEASURES}


def ranking_metrics(maker: MetricMaker, runs: Sequence[tuple[Sequence[str], set[str]]]) -> list[Metric]:
    """The five measures as metrics with a bootstrap over queries."""
    per_query = [query_scores(ranked, relevant) for ranked, relevant in runs]
    return [maker.mean(m, [q[m] for q in per_query]) for m in MEASURES]


def _require(*paths: Path) -> None:
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"retrieval data missing: {path}")


def _rank_all(index, embedder, queries: Sequence[Query], cfg: RetrieveConfig, progress) \
        -> list[tuple[list[str], set[str]]]:  # noqa: ANN001
    runs = []
    for _, question, relevant in queries:
        runs.append((ranked_ids(index, embedder, question, cfg), relevant))
        progress.advance()
    return runs


def _fmt(scores: dict[str, float]) -> tuple[str, ...]:
    return tuple(f"{scores[m]:.3f}" for m in MEASURES)


def run(ctx: EvalContext, answered: tuple[AnsweredItem, ...] = ()) -> SuiteOutput:
    """AILA (all), IPC dev (split dev), IPC held-out pool (split held); per-set and per-method tables."""
    from flows.backends import get_embedder

    started = time.perf_counter()
    ci = ctx.subset == "ci"
    aila_dir = ctx.data_root / "aila2019-statutes" / "beir"
    acts = {"IPC": ACTS["IPC"]} if ci else ACTS
    _require(aila_dir / "corpus.jsonl", aila_dir / "queries.jsonl",
             *(ctx.data_root / "indian-acts-json" / name for name in acts.values()))
    ctx.progress.start("retrieval: loading the embedder and embedding the corpora", 2)
    inner = get_embedder("minilm")
    embedder = MemoEmbedder(inner)  # each query is encoded once across the three methods
    aila_corpus = aila_chunks(ctx.data_root)
    aila_index = build_index(aila_corpus, inner, ctx.cache_dir, index_uri=ctx.index_uri)
    ctx.progress.advance()
    chunks: list[Chunk] = [c for c in act_chunks(ctx.data_root) if c.provenance.doc_code in acts]
    acts_index = build_index(chunks, inner, ctx.cache_dir, index_uri=ctx.index_uri)
    ctx.progress.advance()
    built = time.perf_counter() - started

    corpus = (f"over the IPC act alone ({len(chunks)} sections; ci slice: fewer distractors than the full run's "
              "seven acts)" if ci else f"over the seven acts of indian-acts-json ({len(chunks)} sections)")
    later_sets = {name: ipc_queries(name) for name in IPC_LATER}
    held_sets = {name: ipc_queries(name) for name in IPC_HELD}
    aila, dev = aila_queries(ctx.data_root), ipc_queries("dev")
    datasets: dict[str, tuple[str, str, object, list[Query]]] = {
        "aila": (f"AILA 2019: {len(aila)} fact-pattern queries over {len(aila_corpus)} statutes (TREC qrels)",
                 "all", aila_index, aila),
        "ipc_dev": (f"IPC questions, dev set (used for tuning): {len(dev)} questions {corpus}", "dev", acts_index,
                    dev),
        "ipc_later": (f"IPC questions written after tuning whose misses were later studied, pooled "
                      f"({', '.join(IPC_LATER)}): {sum(map(len, later_sets.values()))} questions {corpus}", "all",
                      acts_index, [q for qs in later_sets.values() for q in qs]),
        "ipc_held": (f"IPC questions never used to choose a shipped default, pooled ({', '.join(IPC_HELD)}): "
                     f"{sum(map(len, held_sets.values()))} questions {corpus}", "held", acts_index,
                     [q for qs in held_sets.values() for q in qs]),
    }
    base = RetrieveConfig().model_copy(update={"top_k": 10})
    metrics: list[Metric] = []
    by_mode: dict[tuple[str, str], dict[str, float]] = {}
    hybrid_runs: dict[str, list[tuple[list[str], set[str]]]] = {}
    for key, (words, split, index, queries) in datasets.items():
        for mode in MODES:
            ctx.progress.start(f"retrieval: {key} ({mode})", len(queries))
            runs = _rank_all(index, embedder, queries, base.model_copy(update={"mode": mode}), ctx.progress)
            by_mode[(key, mode)] = mean_scores(runs)
            if mode == base.mode:
                hybrid_runs[key] = runs
                maker = MetricMaker(SUITE, key, words, split, ctx.resamples)
                metrics += ranking_metrics(maker, runs)

    per_set = []
    for key, sets in (("ipc_later", later_sets), ("ipc_held", held_sets)):
        pooled = iter(hybrid_runs[key])
        for name, queries in sets.items():
            runs = [next(pooled) for _ in queries]
            per_set.append((name, key, str(len(queries)), *_fmt(mean_scores(runs))))
    tables = [
        ReportTable(title="IPC sets written after tuning, one by one (hybrid)",
                    columns=("set", "pool", "n", *MEASURES), rows=tuple(per_set),
                    note="heldout-heldout6 had their misses looked at after their first run (ipc_later); heldout7 "
                         "was kept unseen until the confidence fit had been chosen, heldout8 was run once for a "
                         "baseline, heldout9 judged the (default-off) rerank: none chose a shipped default "
                         "(ipc_held). See bench/retrieval_eval.py."),
        ReportTable(title="BM25 alone and dense alone (baselines) vs hybrid (the shipped default)",
                    columns=("data set", "method", *MEASURES),
                    rows=tuple((key, mode + (" (citebound)" if mode == base.mode else " (baseline)"),
                                *_fmt(by_mode[(key, mode)])) for key in datasets for mode in MODES)),
    ]
    notes = (f"RetrieveConfig() defaults (mode {base.mode}, rrf_k {base.rrf_k}, dense weight {base.dense_weight}, "
             f"bm25 weight {base.bm25_weight}, rerank {base.rerank}) with top_k raised to 10.",
             f"embedder load and corpus embedding: {built:.1f} s (cached in {ctx.cache_dir}).")
    report = SuiteReport(suite=SUITE, seconds=time.perf_counter() - started, metrics=tuple(metrics),
                         tables=tuple(tables), notes=notes)
    return SuiteOutput(report=report)
