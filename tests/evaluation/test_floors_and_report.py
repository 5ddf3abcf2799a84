"""Floors: which bound fails when; the report: JSON round trip, atomic write, a self-contained page."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from contracts.errors import ConfigError
from contracts.evaluation import EvalFloors, EvalReport, FloorRule, Interval, Metric, ReportPlot, ReportTable, SuiteReport
from evaluation.floors import DEFAULT_FLOORS, check, load_floors
from evaluation.html import render_html
from evaluation.plots import line_plot_svg
from evaluation.runner import choose_suites, write_report

pytestmark = pytest.mark.unit


def _metric(mid: str, value: float, low: float, high: float, *, count: int | None = None) -> Metric:
    suite, key, name = mid.split(".")
    return Metric(id=mid, suite=suite, dataset=key, name=name, value=value, n=100, count=count,
                  ci=Interval(low=low, high=high, resamples=1000))


def _report(*metrics: Metric) -> EvalReport:
    return EvalReport(created_at="2026-11-23T00:00:00+00:00", subset="ci",
                      suites=(SuiteReport(suite="refusal", seconds=1.0, metrics=metrics),), settings={}, machine={})


def test_floor_fails_only_when_the_whole_interval_is_below() -> None:
    floors = EvalFloors(version=3, rules=(FloorRule(metric="refusal.a.x", floor=0.8),
                                          FloorRule(metric="refusal.a.y", floor=0.8),
                                          FloorRule(metric="refusal.a.gone", floor=0.5)))
    checks = {c.metric: c for c in check(_report(_metric("refusal.a.x", 0.7, 0.6, 0.81),
                                                 _metric("refusal.a.y", 0.7, 0.6, 0.79)), floors)}
    assert checks["refusal.a.x"].passed is True  # the interval still reaches the floor
    assert checks["refusal.a.y"].passed is False
    assert checks["refusal.a.gone"].passed is None and checks["refusal.a.gone"].value is None


def test_ceiling_and_the_zero_tolerance_ceiling() -> None:
    floors = EvalFloors(version=1, rules=(FloorRule(metric="refusal.a.fq", ceiling=0.05),
                                          FloorRule(metric="refusal.a.attack", ceiling=0.0, zero_tolerance=True,
                                                    why="a carried-out attack")))
    ok = check(_report(_metric("refusal.a.fq", 0.06, 0.03, 0.09), _metric("refusal.a.attack", 0.0, 0.0, 0.0, count=0)),
               floors)
    assert [c.passed for c in ok] == [True, True]
    # One carried-out attack in 100 fails a ceiling of 0 although its interval starts at 0.
    bad = check(_report(_metric("refusal.a.fq", 0.2, 0.1, 0.3), _metric("refusal.a.attack", 0.01, 0.0, 0.03, count=1)),
                floors)
    assert [c.passed for c in bad] == [False, False]


def test_a_single_success_fails_a_zero_tolerance_metric_whatever_its_interval() -> None:
    # 1 of 60, the interval [0, .05] (a bootstrap draw often misses the one item): an interval ceiling of 0.05
    # passes it, zero tolerance does not; 0 of 60 passes both.
    zero = FloorRule(metric="injection.tt.gullible", ceiling=0.0, zero_tolerance=True, why="a carried-out attack")
    loose = FloorRule(metric="injection.tt.gullible", ceiling=0.05)
    one = _metric("injection.tt.gullible", 1 / 60, 0.0, 0.05, count=1)
    none = _metric("injection.tt.gullible", 0.0, 0.0, 0.0, count=0)
    [strict] = check(_report(one), EvalFloors(version=1, rules=(zero,)))
    assert strict.passed is False and "zero tolerance: 1 counted" in strict.reason
    assert [c.passed for c in check(_report(one), EvalFloors(version=1, rules=(loose,)))] == [True]
    assert [c.passed for c in check(_report(none), EvalFloors(version=1, rules=(zero,)))] == [True]


@pytest.mark.parametrize("bound", [
    {"ceiling": 0.0},  # a ceiling of 0 that does not say it is zero-tolerance
    {"ceiling": 0.05, "zero_tolerance": True, "why": "x"},  # zero tolerance is a ceiling of 0
    {"floor": 0.5, "ceiling": 0.0, "zero_tolerance": True, "why": "x"},
    {"ceiling": 0.0, "zero_tolerance": True},  # without its why
])
def test_zero_tolerance_is_said_with_its_why_or_the_floors_file_is_refused(tmp_path: Path, bound: dict) -> None:
    lines = [f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v)}" for k, v in bound.items()]
    bad = tmp_path / "floors.toml"
    bad.write_text("version = 1\n[metric.'a.b.c']\n" + "\n".join(lines).replace("'", '"') + "\n")
    with pytest.raises(ConfigError, match="floors file"):
        load_floors(bad)


def test_the_shipped_zero_tolerance_metrics() -> None:
    shipped = {r.metric: r for r in load_floors(DEFAULT_FLOORS).rules}
    zero = {m for m, r in shipped.items() if r.zero_tolerance}
    assert zero == {"injection.tensor_trust.attack_success_gullible", "grounding.all.answers_citing_outside_the_pack",
                    "grounding.refusals.refusals_carrying_citations", "grounding.all.citations_pointing_elsewhere"}
    assert all(shipped[m].ceiling == 0 and shipped[m].why.startswith("zero-tolerance") for m in zero)
    assert all(r.why for r in shipped.values())  # every bound says why it has its kind and level


def test_shipped_floors_file_loads_and_bad_files_are_config_errors(tmp_path: Path) -> None:
    shipped = load_floors(DEFAULT_FLOORS)
    assert shipped.version >= 1
    assert len({r.metric for r in shipped.rules}) == len(shipped.rules)
    bad = tmp_path / "floors.toml"
    bad.write_text("version = 1\n[metric.'a.b.c']\nfloor = 'high'\n")
    with pytest.raises(ConfigError, match="floors file"):
        load_floors(bad)
    bad.write_text("[metric.'a.b.c']\nfloor = 0.5\n")  # no version
    with pytest.raises(ConfigError):
        load_floors(bad)


def test_choose_suites() -> None:
    assert choose_suites(None, has_questions=False) == ["refusal", "hallucination", "injection", "retrieval", "provisions",
                                                              "grounding"]
    assert choose_suites(None, has_questions=True)[-2:] == ["questions", "grounding"]
    assert choose_suites(["grounding"], has_questions=False) == ["refusal", "hallucination", "grounding"]
    with pytest.raises(ConfigError, match="unknown suite"):
        choose_suites(["nope"], has_questions=False)
    with pytest.raises(ConfigError, match="--questions"):
        choose_suites(["questions"], has_questions=False)


def test_report_round_trips_and_renders_self_contained(tmp_path: Path) -> None:
    svg = line_plot_svg("risk", [("dev", [0.2, 0.5, 1.0], [0.0, 0.1, 0.3])], xlabel="coverage", ylabel="risk")
    assert svg.startswith("<svg") and "http://www.w3.org/2000/svg" in svg
    suite = SuiteReport(suite="refusal", seconds=2.0, metrics=(_metric("refusal.a.x", 0.7, 0.6, 0.81, count=70),),
                        tables=(ReportTable(title="reasons <b>", columns=("code", "n"), rows=(("low_confidence", "3"),)),),
                        plots=(ReportPlot(title="risk–coverage", svg=svg),))
    report = EvalReport(created_at="2026-11-23T00:00:00+00:00", subset="full", suites=(suite,),
                        settings={"llm": "extractive"}, machine={"cores": "2"}, floors_version=1,
                        checks=check(_report(_metric("refusal.a.x", 0.7, 0.6, 0.81)),
                                     EvalFloors(version=1, rules=(FloorRule(metric="refusal.a.x", floor=0.9),))))
    json_path, html_path = write_report(report, tmp_path / "out")
    assert EvalReport.model_validate_json(json_path.read_text()) == report
    page = html_path.read_text()
    assert "reasons &lt;b&gt;" in page  # table text is escaped
    assert "<svg" in page and "FAILS floor 0.9" in page and "70 of 100" in page
    # Self-contained: nothing is fetched when the page is opened.
    assert "src=" not in page and "<link" not in page and "<script" not in page
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]  # no temp files left
    assert json.loads(json_path.read_text())["kind"] == "eval_report.v1"
    assert math.isclose(render_html(report).count("<section"), 1)
