"""``citebound eval``: the quality suites on the shared data (and your questions), ``report.json`` + ``report.html``."""

from __future__ import annotations

import argparse

from cli.common import add_common, store_root

__all__ = ["add_parsers", "cmd_eval"]


def cmd_eval(args: argparse.Namespace) -> int:
    from evaluation.command import run_eval_command

    return run_eval_command(args, store_root(args) if args.questions else None)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The eval command."""
    sp = sub.add_parser("eval", help="measure grounding, refusal, hallucination, injection and retrieval on the "
                                     "shared data (and your own questions); write report.json + report.html")
    sp.add_argument("--suite", action="append", help="refusal | hallucination | injection | retrieval | grounding | "
                                                     "questions (repeatable; default all)")
    sp.add_argument("--llm", help="extractive (default) | openai")
    sp.add_argument("--llm-model")
    sp.add_argument("--verifier", help="read with a verifier: citebound (the shipped model) or a model folder; default off, as in the product")
    sp.add_argument("--llm-url", help="an OpenAI-compatible server for --llm openai (default $OPENAI_BASE_URL)")
    sp.add_argument("--questions", help="JSONL: question, expected sources or sections, optional facts; asked "
                                        "over --store")
    sp.add_argument("--out", required=True, help="folder for report.json and report.html")
    sp.add_argument("--check", action="store_true", help="exit 1 when a metric's interval misses its floor")
    sp.add_argument("--subset", choices=["full", "ci"], default="full", help="ci: the fast slice CI runs")
    sp.add_argument("--floors", help="floors file (default: evaluation/floors.toml)")
    sp.add_argument("--cache", help="embedding cache folder (default ~/.cache/citebound/eval)")
    sp.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per metric")
    add_common(sp)
    sp.set_defaults(func=cmd_eval)
