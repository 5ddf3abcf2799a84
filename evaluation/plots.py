"""Plots for the report, drawn with matplotlib (Agg) into self-contained SVG text: no network, no files."""

from __future__ import annotations

import io
from collections.abc import Sequence

__all__ = ["line_plot_svg"]


def line_plot_svg(
    title: str,
    series: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    xlabel: str,
    ylabel: str,
    xlim: tuple[float, float] | None = (0.0, 1.0),
    ylim: tuple[float, float] | None = (0.0, 1.0),
) -> str:
    """One axes, one line per ``(label, xs, ys)``; returns the ``<svg>`` element."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, and selectable in the page
    plt.rcParams["svg.hashsalt"] = "citebound"  # stable ids, so equal data gives equal SVG
    fig, ax = plt.subplots(figsize=(5.6, 3.6), dpi=100)
    try:
        for label, xs, ys in series:
            ax.plot(list(xs), list(ys), marker="o", markersize=3, linewidth=1.5, label=label)
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if xlim:
            ax.set_xlim(*xlim)
        if ylim:
            ax.set_ylim(*ylim)
        ax.grid(True, alpha=0.3)
        if len(series) > 1:
            ax.legend(fontsize=8)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]
