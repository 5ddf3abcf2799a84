"""The one implementation of each metric, on inputs whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.metrics import (
    MetricMaker,
    bootstrap_interval,
    contains_phrase,
    detection_counts,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    risk_coverage,
)

pytestmark = pytest.mark.unit


def test_ranking_metrics_by_hand() -> None:
    ranked = ["a", "x", "b", "y"]
    assert recall_at_k(ranked, {"a", "b"}, 1) == 0.5
    assert recall_at_k(ranked, {"a", "b"}, 3) == 1.0
    assert reciprocal_rank(ranked, {"b"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranked, {"z"}) == 0.0
    assert reciprocal_rank(ranked, {"b"}, k=2) == 0.0  # beyond the cut-off
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; ideal (two relevant first) = 1 + 1/log2(3)
    assert ndcg_at_k(ranked, {"a", "b"}) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert ndcg_at_k(["a", "b"], {"a", "b"}) == pytest.approx(1.0)


def test_detection_counts_and_scores() -> None:
    truth = [True, True, True, False, False, False, False, True]
    flagged = [True, True, False, True, False, False, False, False]
    c = detection_counts(truth, flagged)
    assert (c.tp, c.fp, c.fn, c.tn) == (2, 1, 2, 3)
    assert c.precision == pytest.approx(2 / 3)
    assert c.recall == pytest.approx(0.5)
    assert c.f1 == pytest.approx(2 * 2 / (2 * 2 + 1 + 2))
    assert c.balanced_accuracy == pytest.approx((0.5 + 0.75) / 2)


def test_bootstrap_is_seeded_and_brackets_the_value() -> None:
    values = np.array([1.0] * 30 + [0.0] * 10)
    a = bootstrap_interval(values, np.mean, resamples=500, seed=7)
    b = bootstrap_interval(values, np.mean, resamples=500, seed=7)
    assert a == b
    spread = np.linspace(0.0, 1.0, 37) ** 2  # continuous values: another seed moves the quantiles
    assert bootstrap_interval(spread, np.mean, seed=1) != bootstrap_interval(spread, np.mean, seed=2)
    assert a.low < 0.75 < a.high
    # The textbook width for p = .75, n = 40: about +-1.96 * sqrt(.75 * .25 / 40) = +-0.134.
    assert 0.2 < a.high - a.low < 0.33
    constant = bootstrap_interval(np.ones(12), np.mean, resamples=200, seed=1)
    assert (constant.low, constant.high) == (1.0, 1.0)
    empty = bootstrap_interval(np.array([]), np.mean)
    assert math.isnan(empty.low) and empty.resamples == 0


def test_metric_maker_rate_ids_counts_and_interval() -> None:
    make = MetricMaker("refusal", "squad_held", "SQuAD held half", split="held", resamples=300)
    m = make.rate("unanswerable refused", [True] * 9 + [False] * 3)
    assert m.id == "refusal.squad_held.unanswerable_refused"
    assert (m.value, m.n, m.count, m.split) == (0.75, 12, 9, "held")
    # The interval is the bootstrap of the same outcomes with the metric's own seed: recomputable.
    again = make.rate("unanswerable refused", [True] * 9 + [False] * 3)
    assert again.ci == m.ci and m.ci.low <= 0.75 <= m.ci.high and m.ci.resamples == 300
    assert make.mean("R@5", [1.0, 0.5, 0.0]).id == "refusal.squad_held.R_at_5"


def test_ratio_pools_over_clusters() -> None:
    make = MetricMaker("grounding", "all", "x", resamples=200)
    m = make.ratio("citation precision", [2, 0, 3], [2, 1, 4])
    assert m.value == pytest.approx(5 / 7) and (m.count, m.n) == (5, 7)
    assert m.ci.low <= m.value <= m.ci.high


def test_detection_metrics_resample_pairs() -> None:
    make = MetricMaker("hallucination", "halueval_dev", "x", split="dev", resamples=200)
    truth = [True] * 10 + [False] * 10
    flagged = [True] * 8 + [False] * 2 + [True] * 1 + [False] * 9
    by_name = {m.name: m for m in make.detection(truth, flagged)}
    assert by_name["precision"].value == pytest.approx(8 / 9)
    assert by_name["recall"].value == pytest.approx(0.8)
    assert by_name["F1"].value == pytest.approx(16 / 19)
    assert by_name["balanced accuracy"].value == pytest.approx(0.85)
    assert all(m.ci.low <= m.value <= m.ci.high for m in by_name.values())


def test_risk_coverage_by_hand() -> None:
    conf = [0.9, 0.8, 0.5, 0.35, None]
    answered = [True, True, True, True, False]
    correct = [True, False, True, False, False]
    rows = risk_coverage(conf, answered, correct, [0.0, 0.6, 0.95])
    assert rows[0] == (0.0, 0.8, 0.5, 4, 2)
    assert rows[1] == (0.6, 0.4, 0.5, 2, 1)
    assert rows[2] == (0.95, 0.0, 0.0, 0, 0)


def test_contains_phrase_ignores_case_and_spacing_but_never_finds_nothing() -> None:
    assert contains_phrase("It was  founded by\nAnsel KORRIN in 1821.", " ansel korrin ")
    assert not contains_phrase("Ansel Korrin", "Ansel Korin")
    assert not contains_phrase("anything", "   ")
