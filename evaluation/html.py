"""``report.html``: the ``EvalReport`` as one self-contained page (inline CSS and SVG; no script, no network)."""

from __future__ import annotations

import math
from html import escape

from contracts.evaluation import EvalReport, FloorCheck, Metric, SuiteReport

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;color:#1d1d1f;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:2px solid #e5e5ea;padding-bottom:.2rem}
h3{font-size:1rem;margin:1.4rem 0 .4rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;width:100%}th,td{border-bottom:1px solid #e5e5ea;padding:.28rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f5f7;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.meta{color:#555}.pass{color:#0a7d32;font-weight:600}.fail{color:#c4001a;font-weight:700}.na{color:#888}
.bar{position:relative;height:10px;background:#f0f0f3;border-radius:3px;min-width:120px}
.bar span{position:absolute;top:0;height:10px;background:#9ec5fe;border-radius:3px}
.bar i{position:absolute;top:-2px;width:2px;height:14px;background:#0b57d0}
.bar b{position:absolute;top:-3px;width:2px;height:16px;background:#c4001a}
.held{background:#fff7e0;border-radius:3px;padding:0 .3rem;font-size:.8rem}.plots{display:flex;flex-wrap:wrap;gap:1rem}
.plots figure{margin:0}.note{color:#555;font-size:.9rem}code{background:#f5f5f7;padding:0 .2rem;border-radius:3px}
"""


def _fmt(value: float | None, *, pct: bool) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * value:.1f}%" if pct else f"{value:.3f}"


def _is_rate(metric: Metric) -> bool:
    return metric.count is not None


def _bar(metric: Metric, limit: float | None) -> str:
    """The value (tick), its interval (band) and the floor (red tick) on a 0..1 scale."""
    def pos(x: float) -> float:
        return max(0.0, min(1.0, x)) * 100

    if math.isnan(metric.value) or not (0.0 <= metric.value <= 1.0):
        return ""
    band = "" if math.isnan(metric.ci.low) else (
        f'<span style="left:{pos(metric.ci.low):.1f}%;width:{max(0.5, pos(metric.ci.high) - pos(metric.ci.low)):.1f}%"></span>')
    floor = f'<b style="left:{pos(limit):.1f}%" title="bound {limit:g}"></b>' if limit is not None else ""
    return f'<div class="bar">{band}<i style="left:{pos(metric.value):.1f}%"></i>{floor}</div>'


def _metric_rows(suite: SuiteReport, bounds: dict[str, FloorCheck]) -> str:
    rows = []
    for m in suite.metrics:
        pct = _is_rate(m) or m.name.endswith("rate")
        chk = bounds.get(m.id)
        status = ""
        if chk is not None:
            cls = "na" if chk.passed is None else ("pass" if chk.passed else "fail")
            word = "not measured" if chk.passed is None else ("meets" if chk.passed else "FAILS")
            status = f'<span class="{cls}" title="{escape(chk.reason)}">{word} {chk.bound} {chk.limit:g}</span>'
        counted = f"{m.count} of {m.n}" if m.count is not None else f"n = {m.n}"
        held = ' <span class="held">held out</span>' if m.split == "held" else ""
        arrow = "" if m.higher_is_better else " ↓"
        rows.append(
            f"<tr><td>{escape(m.name)}{arrow}{held}</td><td>{escape(m.dataset)}</td><td class=num>{_fmt(m.value, pct=pct)}</td>"
            f"<td class=num>{_fmt(m.ci.low, pct=pct)} – {_fmt(m.ci.high, pct=pct)}</td><td class=num>{counted}</td>"
            f"<td>{_bar(m, chk.limit if chk else None)}</td><td>{status}</td></tr>"
            + (f'<tr><td></td><td colspan=6 class="note">{escape(m.note)}</td></tr>' if m.note else ""))
    if not rows:
        return ""
    return ("<table><tr><th>metric</th><th>data</th><th>value</th><th>95% CI</th><th>count</th><th></th><th>bound</th></tr>"
            + "".join(rows) + "</table>")


def _tables(suite: SuiteReport) -> str:
    out = []
    for t in suite.tables:
        head = "".join(f"<th>{escape(c)}</th>" for c in t.columns)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in t.rows)
        note = f'<p class="note">{escape(t.note)}</p>' if t.note else ""
        out.append(f"<h3>{escape(t.title)}</h3><table><tr>{head}</tr>{body}</table>{note}")
    return "".join(out)


def _plots(suite: SuiteReport) -> str:
    if not suite.plots:
        return ""
    # The SVG is matplotlib's own output for our data, embedded as is (it is markup, not text to escape).
    figs = "".join(f"<figure>{p.svg}<figcaption class=note>{escape(p.title)}</figcaption></figure>" for p in suite.plots)
    return f'<div class="plots">{figs}</div>'


def _summary(report: EvalReport) -> str:
    if not report.checks:
        return '<p class="meta">No floors were checked in this run (<code>--check</code> checks them).</p>'
    failed = [c for c in report.checks if c.passed is False]
    measured = [c for c in report.checks if c.passed is not None]
    cls = "fail" if failed else "pass"
    head = (f'<p class="{cls}">{len(measured) - len(failed)} of {len(measured)} measured bounds met'
            f"{'; ' + str(len(failed)) + ' failed' if failed else ''} (floors v{report.floors_version}).</p>")
    rows = "".join(
        f"<tr><td><code>{escape(c.metric)}</code></td><td>{c.bound} {c.limit:g}</td><td class=num>"
        f"{_fmt(c.value, pct=False)}</td><td class={'fail' if c.passed is False else ('pass' if c.passed else 'na')}>"
        f"{'met' if c.passed else ('FAILED' if c.passed is False else 'not measured')}</td><td>{escape(c.reason)}</td></tr>"
        for c in report.checks)
    return head + f"<table><tr><th>metric</th><th>bound</th><th>value</th><th></th><th>why</th></tr>{rows}</table>"


def render_html(report: EvalReport) -> str:
    bounds = {c.metric: c for c in report.checks}
    meta = " · ".join(f"{escape(k)} {escape(v)}" for k, v in report.machine.items())
    settings = " · ".join(f"{escape(k)}: {escape(v)}" for k, v in report.settings.items())
    sections = []
    for suite in report.suites:
        notes = "".join(f'<p class="note">{escape(n)}</p>' for n in suite.notes)
        sections.append(f'<section id="{escape(suite.suite)}"><h2>{escape(suite.suite)} '
                        f'<span class="meta" style="font-size:.8rem">{suite.seconds:.0f} s</span></h2>'
                        f"{notes}{_metric_rows(suite, bounds)}{_plots(suite)}{_tables(suite)}</section>")
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        f"<title>citebound eval · {escape(report.created_at)}</title><style>{_CSS}</style></head><body>"
        f"<h1>citebound eval</h1><p class=meta>{escape(report.created_at)} · {report.subset} run · "
        f"{report.seconds:.0f} s</p><p class=meta>{meta}</p><p class=meta>{settings}</p>"
        f"<p class=note>Every figure is over the items counted beside it, with a bootstrap 95% interval (the items "
        f"resampled with replacement). Rows marked <span class=held>held out</span> are halves never looked at "
        f"while tuning. ↓ = lower is better.</p>"
        f"<h2>Floors</h2>{_summary(report)}{''.join(sections)}</body></html>\n"
    )
