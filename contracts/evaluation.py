"""What ``citebound eval`` hands on: metrics with their data set, count and interval; floors; the report.

A metric is data, not a printed line: its id (``suite.dataset.name``), the data set it was measured on, how
many items it is over, its value and a bootstrap 95% interval. ``report.json`` is an ``EvalReport``; the HTML
report is rendered from the same object, so the two never disagree.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from contracts._base import Contract

__all__ = [
    "EvalFloors",
    "EvalReport",
    "FloorCheck",
    "FloorRule",
    "Interval",
    "Metric",
    "ReportPlot",
    "ReportTable",
    "SuiteReport",
]


class Interval(Contract):
    """A bootstrap percentile interval: ``resamples`` draws of the items with replacement, seeded."""

    low: float
    high: float
    level: float = 0.95
    resamples: int = Field(ge=0)
    method: Literal["bootstrap-percentile"] = "bootstrap-percentile"


class Metric(Contract):
    id: str  # "<suite>.<dataset>.<name>", unique in a report; floors name metrics by it
    suite: str
    dataset: str  # which data, in words: "SQuAD 2.0 dev subset, held half (8 articles)"
    name: str  # "unanswerable refused"
    value: float
    n: int = Field(ge=0)  # the items the value is over (questions, answers, queries)
    count: int | None = None  # the numerator, for a rate ("3 of 160")
    ci: Interval
    higher_is_better: bool = True
    split: Literal["dev", "held", "all"] = "all"  # held = a half never looked at while tuning
    note: str | None = None


class ReportTable(Contract):
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str | None = None


class ReportPlot(Contract):
    title: str
    svg: str  # a whole <svg> element, drawn by matplotlib; embedded as is, so the report needs no network


class SuiteReport(Contract):
    kind: Literal["suite_report.v1"] = "suite_report.v1"
    suite: str
    seconds: float
    metrics: tuple[Metric, ...] = ()
    tables: tuple[ReportTable, ...] = ()
    plots: tuple[ReportPlot, ...] = ()
    notes: tuple[str, ...] = ()


class FloorRule(Contract):
    """One metric's bound. A floor fails when the interval's *upper* end is below it (the metric is surely
    too low); a ceiling fails when the interval's *lower* end is above it (surely too high). A
    ``zero_tolerance`` metric (a ceiling of 0, said so) fails on one counted item, whatever its interval: an
    interval cannot excuse a carried-out attack or a citation outside the pack. A ceiling of 0 must say it
    is zero-tolerance, and a zero-tolerance rule must say ``why``, so which kind applies is never implicit."""

    metric: str
    floor: float | None = None
    ceiling: float | None = None
    zero_tolerance: bool = False
    why: str | None = None

    @model_validator(mode="after")
    def _zero_tolerance_is_said(self) -> Self:
        if self.zero_tolerance and (self.ceiling != 0 or self.floor is not None):
            raise ValueError(f"{self.metric}: zero_tolerance is a ceiling of 0 and no floor")
        if self.ceiling == 0 and not self.zero_tolerance:
            raise ValueError(f"{self.metric}: a ceiling of 0 fails on one item; say `zero_tolerance = true`")
        if self.zero_tolerance and not (self.why or "").strip():
            raise ValueError(f"{self.metric}: a zero-tolerance metric says why")
        return self


class EvalFloors(Contract):
    kind: Literal["eval_floors.v1"] = "eval_floors.v1"
    version: int = Field(ge=1)  # bumped whenever a bound changes, recorded in every report
    rules: tuple[FloorRule, ...]


class FloorCheck(Contract):
    metric: str
    bound: Literal["floor", "ceiling"]
    limit: float
    value: float | None  # None: the metric was not measured in this run (not a failure; listed)
    ci: Interval | None
    passed: bool | None  # None: not measured
    reason: str


class EvalReport(Contract):
    kind: Literal["eval_report.v1"] = "eval_report.v1"
    created_at: str  # UTC, ISO 8601
    subset: Literal["full", "ci"]
    suites: tuple[SuiteReport, ...]
    settings: dict[str, str]  # what was run with: data root, llm, seed, resamples, ...
    machine: dict[str, str]  # host, cores, memory, python, git commit
    floors_version: int | None = None
    checks: tuple[FloorCheck, ...] = ()
    seconds: float = 0.0

    def metric(self, metric_id: str) -> Metric | None:
        return next((m for s in self.suites for m in s.metrics if m.id == metric_id), None)
