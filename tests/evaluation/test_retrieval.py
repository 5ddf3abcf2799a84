"""The retrieval suite: R@k / MRR / nDCG@10 on hand-made rankings (exact values, the seeded interval over
queries), the IPC split rule, and (integration) the suite over a handful of real chunks with the real model."""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path

import numpy as np
import pytest

from evaluation import corpora
from evaluation.metrics import MetricMaker, bootstrap_interval
from evaluation.suite import EvalContext
from evaluation.suites import retrieval as suite

# Three hand-made queries: relevant found 2nd; two relevant, found 1st and 3rd; relevant not found.
RUNS = [
    (["a", "b", "c"], {"b"}),
    (["x", "y", "z", "w"], {"x", "z"}),
    (["p", "q"], {"r"}),
]


@pytest.mark.unit
def test_query_scores_on_known_rankings_are_exact() -> None:
    first, second, third = (suite.query_scores(ranked, relevant) for ranked, relevant in RUNS)
    assert first == pytest.approx({"R@1": 0.0, "R@5": 1.0, "R@10": 1.0, "MRR": 0.5, "nDCG@10": 1 / math.log2(3)})
    assert second == pytest.approx({"R@1": 0.5, "R@5": 1.0, "R@10": 1.0, "MRR": 1.0,
                                    "nDCG@10": (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))})
    assert third == {"R@1": 0.0, "R@5": 0.0, "R@10": 0.0, "MRR": 0.0, "nDCG@10": 0.0}
    assert suite.mean_scores(RUNS)["MRR"] == pytest.approx(1.5 / 3)
    # A section below rank 10 counts for none of the @10 measures.
    deep = [f"s{i}" for i in range(11)]
    assert suite.query_scores(deep, {"s10"}) == {"R@1": 0.0, "R@5": 0.0, "R@10": 0.0, "MRR": 0.0, "nDCG@10": 0.0}


@pytest.mark.unit
def test_ranking_metrics_resample_queries_with_the_seeded_bootstrap() -> None:
    maker = MetricMaker("retrieval", "ipc_dev", "hand-made", "dev", resamples=300)
    metrics = {m.name: m for m in suite.ranking_metrics(maker, RUNS)}
    assert list(metrics) == list(suite.MEASURES)
    mrr = metrics["MRR"]
    assert (mrr.id, mrr.split, mrr.n, mrr.value) == ("retrieval.ipc_dev.MRR", "dev", 3, pytest.approx(0.5))
    assert metrics["R@1"].id == "retrieval.ipc_dev.R_at_1" and metrics["R@1"].value == pytest.approx(0.5 / 3)
    per_query = np.asarray([1 / 2, 1.0, 0.0])
    assert mrr.ci == bootstrap_interval(per_query, np.mean, resamples=300, seed=zlib.crc32(b"retrieval.ipc_dev.MRR"))
    assert 0.0 <= mrr.ci.low <= mrr.value <= mrr.ci.high <= 1.0


@pytest.mark.unit
def test_every_ipc_question_set_is_dev_or_pooled_into_held() -> None:
    rows = [json.loads(line) for line in (corpora.QUESTION_SETS / "ipc_questions.jsonl").read_text().splitlines()
            if line.strip()]
    splits = {r.get("split", "dev") for r in rows}
    assert splits == {"dev", *suite.IPC_LATER, *suite.IPC_HELD}
    assert not set(suite.IPC_LATER) & set(suite.IPC_HELD)
    assert len(corpora.ipc_queries("dev")) == 75
    assert sum(len(corpora.ipc_queries(s)) for s in suite.IPC_LATER + suite.IPC_HELD) == 198


@pytest.mark.integration
def test_the_suite_over_a_handful_of_real_chunks(shared_data: Path, tmp_path: Path,
                                                 monkeypatch) -> None:  # noqa: ANN001
    acts = corpora.act_chunks(shared_data)
    wanted = {"IPC_299_0", "IPC_302_0", "IPC_378_0", "IPC_379_0", "IPC_420_0", "CrPC_420_0"}
    few = [c for c in acts if c.semantic_id in wanted]
    assert len(few) == len(wanted)
    aila = corpora.aila_chunks(shared_data)[:6]
    queries = [("Q1", "a man took his neighbour's cattle without consent", {aila[0].semantic_id})]
    monkeypatch.setattr(suite, "act_chunks", lambda root: few)
    monkeypatch.setattr(suite, "aila_chunks", lambda root: aila)
    monkeypatch.setattr(suite, "aila_queries", lambda root: queries)
    monkeypatch.setattr(suite, "ipc_queries", lambda split: [
        (f"{split}-1", "What is the punishment for theft?", {"IPC_379"}),
        (f"{split}-2", "cheating and dishonestly inducing delivery of property", {"IPC_420"})])
    output = suite.run(EvalContext(data_root=shared_data, cache_dir=tmp_path, subset="ci", resamples=20), ())
    metrics = {m.id: m for m in output.report.metrics}
    assert {m.split for m in output.report.metrics} == {"all", "dev", "held"}
    assert metrics["retrieval.ipc_later.MRR"].split == "all" and metrics["retrieval.ipc_held.MRR"].split == "held"
    assert metrics["retrieval.ipc_dev.R_at_5"].value == 1.0  # 5 IPC sections in the ci slice: both in the top 5
    assert metrics["retrieval.ipc_held.R_at_10"].n == 2 * len(suite.IPC_HELD)
    assert "ci slice" in metrics["retrieval.ipc_held.MRR"].dataset
    per_set, methods = output.report.tables
    assert [row[0] for row in per_set.rows] == list(suite.IPC_LATER + suite.IPC_HELD)
    assert [row[1] for row in methods.rows[:3]] == ["bm25 (baseline)", "dense (baseline)", "hybrid (citebound)"]
    assert list(tmp_path.glob("vectors-*.npz"))  # the vectors were cached in ctx.cache_dir
