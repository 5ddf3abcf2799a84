"""Every metric ``citebound eval`` reports, once, with its bootstrap interval.

Pure functions over per-item outcomes; no data loading and no I/O. A suite turns its items into outcomes
(a bool per question, a rank list per query, a (truth, flagged) pair per answer) and asks a ``MetricMaker``
for ``Metric`` contracts. The interval is a percentile bootstrap over the *items* (resampled with
replacement, ``resamples`` times, seeded from the metric's id so a rerun gives the same interval whatever
order the suites ran in).
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from contracts.evaluation import Interval, Metric

__all__ = [
    "DEFAULT_RESAMPLES",
    "DetectionCounts",
    "MetricMaker",
    "bootstrap_interval",
    "contains_phrase",
    "detection_counts",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "risk_coverage",
    "roc_auc",
]

DEFAULT_RESAMPLES = 1000


def bootstrap_interval(
    rows: np.ndarray,
    statistic: Callable[[np.ndarray], float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Percentile interval of ``statistic`` over ``resamples`` resamples of ``rows`` (along axis 0).

    With no rows the interval is [nan, nan]; with ``resamples=0`` it is the point value twice.
    """
    rows = np.asarray(rows)
    n = len(rows)
    if n == 0:
        return Interval(low=math.nan, high=math.nan, level=level, resamples=0)
    if resamples == 0:
        point = float(statistic(rows))
        return Interval(low=point, high=point, level=level, resamples=0)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    values = np.array([statistic(rows[idx]) for idx in draws], dtype=float)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return Interval(low=math.nan, high=math.nan, level=level, resamples=resamples)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return Interval(low=float(low), high=float(high), level=level, resamples=resamples)


def roc_auc(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """Area under the ROC curve: the chance a random positive scores above a random negative (ties count
    half); nan when either class is absent.

    >>> roc_auc([True, False, True, False], [0.9, 0.1, 0.4, 0.4])
    0.875
    """
    truth = np.asarray(labels, dtype=bool)
    values = np.asarray(scores, dtype=float)
    pos, neg = int(truth.sum()), int((~truth).sum())
    if not pos or not neg:
        return math.nan
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    start = 0
    while start < len(order):  # average ranks over ties
        end = start
        while end + 1 < len(order) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return float((ranks[truth].sum() - pos * (pos + 1) / 2) / (pos * neg))


# ------------------------------------------------------------------------------------------ ranking


def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Share of the relevant ids found in the first ``k`` of ``ranked``."""
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    """1 / rank of the first relevant id within the first ``k``; 0 when none is there."""
    first = next((i for i, r in enumerate(ranked[:k], 1) if r in relevant), None)
    return 1.0 / first if first else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k: DCG of ``ranked`` over the DCG of a ranking with every relevant id first."""
    dcg = sum(1.0 / math.log2(i + 1) for i, r in enumerate(ranked[:k], 1) if r in relevant)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


# ------------------------------------------------------------------------------------------ text outcomes

_SPACE = re.compile(r"\s+")


def contains_phrase(text: str, phrase: str) -> bool:
    """``phrase`` inside ``text``, case and runs of white space ignored; an empty phrase is never inside.
    The one rule behind "gold answer in the answer" (refusal) and "facts present" (your questions)."""
    wanted = _SPACE.sub(" ", phrase.lower()).strip()
    return bool(wanted) and wanted in _SPACE.sub(" ", text.lower())


# ------------------------------------------------------------------------------------------ detection


@dataclass(frozen=True)
class DetectionCounts:
    """A detector's confusion counts; positive = the item is bad (hallucinated, attacked) and flagged."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn) if self.tp else 0.0

    @property
    def specificity(self) -> float:
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else 0.0

    @property
    def balanced_accuracy(self) -> float:
        return (self.recall + self.specificity) / 2.0


def detection_counts(truth: Sequence[bool], flagged: Sequence[bool]) -> DetectionCounts:
    t = np.asarray(truth, dtype=bool)
    f = np.asarray(flagged, dtype=bool)
    return DetectionCounts(tp=int((t & f).sum()), fp=int((~t & f).sum()), fn=int((t & ~f).sum()),
                           tn=int((~t & ~f).sum()))


_DETECTION = {
    "precision": lambda c: c.precision,
    "recall": lambda c: c.recall,
    "F1": lambda c: c.f1,
    "balanced accuracy": lambda c: c.balanced_accuracy,
}


# ------------------------------------------------------------------------------------------ risk-coverage


def risk_coverage(
    confidences: Sequence[float | None], answered: Sequence[bool], correct: Sequence[bool], thresholds: Sequence[float]
) -> list[tuple[float, float, float, int, int]]:
    """(threshold, coverage, risk, given, wrong) per threshold.

    An item counts as given at threshold t when it was answered with confidence >= t (raising the policy's
    ``min_confidence`` to t refuses exactly the others). Coverage = given / all items; risk = wrong / given
    (0 when nothing is given).
    """
    rows = []
    n = len(answered)
    for t in thresholds:
        given = [ok for conf, ans, ok in zip(confidences, answered, correct, strict=True)
                 if ans and (conf or 0.0) >= t]
        wrong = sum(1 for ok in given if not ok)
        rows.append((t, len(given) / n if n else 0.0, wrong / len(given) if given else 0.0, len(given), wrong))
    return rows


# ------------------------------------------------------------------------------------------ metrics


@dataclass(frozen=True)
class MetricMaker:
    """Makes the ``Metric`` contracts of one suite on one data set (ids ``suite.dataset_key.name``)."""

    suite: str
    dataset_key: str  # short, for the id: "squad_held"
    dataset: str  # in words, for the reader
    split: str = "all"
    resamples: int = DEFAULT_RESAMPLES

    def _id(self, name: str) -> str:
        return f"{self.suite}.{self.dataset_key}.{name.replace(' ', '_').replace('@', '_at_')}"

    def _seed(self, metric_id: str) -> int:
        return zlib.crc32(metric_id.encode())

    def _metric(self, name: str, value: float, n: int, ci: Interval, **extra) -> Metric:  # noqa: ANN003
        return Metric(id=self._id(name), suite=self.suite, dataset=self.dataset, name=name, value=float(value),
                      n=n, ci=ci, split=self.split, **extra)

    def rate(self, name: str, outcomes: Sequence[bool], *, higher_is_better: bool = True,
             note: str | None = None) -> Metric:
        """The share of items whose outcome is True ("unanswerable refused": 137 of 160)."""
        values = np.asarray(outcomes, dtype=float)
        ci = bootstrap_interval(values, np.mean, resamples=self.resamples, seed=self._seed(self._id(name)))
        value = float(values.mean()) if len(values) else math.nan
        return self._metric(name, value, len(values), ci, count=int(values.sum()),
                            higher_is_better=higher_is_better, note=note)

    def mean(self, name: str, values: Sequence[float], *, higher_is_better: bool = True,
             note: str | None = None) -> Metric:
        """The mean of a per-item score (reciprocal rank, nDCG@10, recall@5 per query)."""
        arr = np.asarray(values, dtype=float)
        ci = bootstrap_interval(arr, np.mean, resamples=self.resamples, seed=self._seed(self._id(name)))
        value = float(arr.mean()) if len(arr) else math.nan
        return self._metric(name, value, len(arr), ci, higher_is_better=higher_is_better, note=note)

    def ratio(self, name: str, numerators: Sequence[float], denominators: Sequence[float], *,
              higher_is_better: bool = True, note: str | None = None) -> Metric:
        """sum(numerators) / sum(denominators), resampling the items that carry both (e.g. verified citations
        over all citations, per answer): a pooled rate whose items are clusters."""
        rows = np.column_stack([np.asarray(numerators, dtype=float), np.asarray(denominators, dtype=float)]) \
            if len(numerators) else np.zeros((0, 2))

        def pooled(r: np.ndarray) -> float:
            total = r[:, 1].sum()
            return float(r[:, 0].sum() / total) if total else math.nan

        ci = bootstrap_interval(rows, pooled, resamples=self.resamples, seed=self._seed(self._id(name)))
        value = pooled(rows) if len(rows) else math.nan
        return self._metric(name, value, int(rows[:, 1].sum()) if len(rows) else 0, ci,
                            count=int(rows[:, 0].sum()) if len(rows) else 0,
                            higher_is_better=higher_is_better, note=note)

    def auc(self, name: str, labels: Sequence[bool], scores: Sequence[float], *, note: str | None = None) -> Metric:
        """ROC AUC of a score separating positives (``labels`` True) from negatives, the (label, score) pairs
        resampled together."""
        rows = np.column_stack([np.asarray(labels, dtype=float), np.asarray(scores, dtype=float)]) \
            if len(labels) else np.zeros((0, 2))

        def stat(r: np.ndarray) -> float:
            return roc_auc(r[:, 0] > 0.5, r[:, 1])

        ci = bootstrap_interval(rows, stat, resamples=self.resamples, seed=self._seed(self._id(name)))
        value = stat(rows) if len(rows) else math.nan
        return self._metric(name, value, len(rows), ci, note=note)

    def detection(self, truth: Sequence[bool], flagged: Sequence[bool], *, prefix: str = "",
                  note: str | None = None) -> list[Metric]:
        """Precision, recall, F1 and balanced accuracy of a detector, each with its bootstrap interval
        (the (truth, flagged) pairs are resampled together)."""
        rows = np.column_stack([np.asarray(truth, dtype=bool), np.asarray(flagged, dtype=bool)])
        out = []
        for name, score in _DETECTION.items():
            full = f"{prefix}{name}"

            def stat(r: np.ndarray, score=score) -> float:  # noqa: ANN001
                return score(detection_counts(r[:, 0], r[:, 1]))

            ci = bootstrap_interval(rows, stat, resamples=self.resamples, seed=self._seed(self._id(full)))
            value = score(detection_counts(rows[:, 0], rows[:, 1])) if len(rows) else math.nan
            out.append(self._metric(full, value, len(rows), ci, note=note))
        return out
