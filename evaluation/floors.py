"""The floors (and ceilings) a run must meet, from the versioned ``floors.toml`` beside this module.

``check`` compares a report with them: a floor fails when the metric's interval lies wholly below it (its
upper end is below the floor), a ceiling when the interval lies wholly above it; a ``zero_tolerance``
metric (a ceiling of 0) fails on any counted item, whatever its interval. A bound whose metric the run did
not measure is listed as not measured, not failed.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

from pydantic import ValidationError

from contracts.errors import ConfigError
from contracts.evaluation import EvalFloors, EvalReport, FloorCheck, FloorRule

__all__ = ["DEFAULT_FLOORS", "check", "load_floors"]

DEFAULT_FLOORS = Path(__file__).resolve().parent / "floors.toml"


def load_floors(path: Path = DEFAULT_FLOORS) -> EvalFloors:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        rules = tuple(FloorRule(metric=metric, **bound) for metric, bound in raw.get("metric", {}).items())
        return EvalFloors(version=raw["version"], rules=rules)
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValidationError) as exc:
        raise ConfigError(f"floors file {path}: {exc}") from exc


def _check_rule(rule: FloorRule, report: EvalReport) -> list[FloorCheck]:
    metric = report.metric(rule.metric)
    out = []
    for bound, limit in (("floor", rule.floor), ("ceiling", rule.ceiling)):
        if limit is None:
            continue
        if metric is None or math.isnan(metric.value):
            out.append(FloorCheck(metric=rule.metric, bound=bound, limit=limit, value=None, ci=None, passed=None,
                                  reason="not measured in this run"))
            continue
        ci = metric.ci
        if bound == "floor":
            passed = not (ci.high < limit)
            reason = f"95% interval [{ci.low:.3f}, {ci.high:.3f}] {'reaches' if passed else 'lies below'} {limit:g}"
        elif rule.zero_tolerance:
            counted = metric.count if metric.count is not None else metric.value
            passed = counted == 0 and metric.value == 0
            reason = f"zero tolerance: {counted:g} counted{'' if passed else ', and any fails whatever the interval'}"
        else:
            passed = not (ci.low > limit)
            reason = f"95% interval [{ci.low:.3f}, {ci.high:.3f}] {'starts at or below' if passed else 'lies above'} {limit:g}"
        out.append(FloorCheck(metric=rule.metric, bound=bound, limit=limit, value=metric.value, ci=ci,
                              passed=passed, reason=reason))
    return out


def check(report: EvalReport, floors: EvalFloors) -> tuple[FloorCheck, ...]:
    return tuple(c for rule in floors.rules for c in _check_rule(rule, report))
