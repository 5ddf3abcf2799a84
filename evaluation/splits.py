"""Which eval items may be tuned on (dev) and which are only reported (held): the one definition ``bench/`` and
``evaluation/`` both import.

**SQuAD 2.0** (``squad2-dev-subset``, refusal and injection suites). The held half is the set of articles
recorded, by title and by a sha256 of their questions, in ``evaluation/data/squad_held_split.json``: drawn once
(``bench/draw_squad_held.py``, 2026-11-25) and committed before anything scored it. Every other article of the
file is dev. The manifest also lists the articles that were the held half until then (``retired_held``): their
figures were reported and two of their questions were quoted in the code, so they are dev now, and no item of
theirs is quoted anywhere (``tests/test_heldout_clean.py``), so that the figures once reported on them keep their
meaning. ``excluded_ids`` are the questions of the held articles that ``evaluation.corpora.squad_questions``
asked before as off-topic statute questions (looked at): no suite scores them as held items.

**IPC question sets** (``bench/data/ipc_questions.jsonl``, retrieval and provisions suites): ``dev`` was tuned on;
``heldout`` .. ``heldout6`` were written later and had their misses studied after their first run (``later``:
reported, not held); ``heldout7`` .. ``heldout9`` never chose a shipped default (``held``). Only the questions
are held: the IPC section texts they are asked against are the corpus, and the verifier trained on statute pairs
made from every section.

**HaluEval QA** (the first 500 records): 0-249 dev, 250-499 held.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contracts.errors import ConfigError

__all__ = [
    "HALUEVAL",
    "IPC_BENCH_TAGS",
    "IPC_DEV",
    "IPC_HELD",
    "IPC_JUDGE",
    "IPC_LATER",
    "SQUAD_MANIFEST",
    "SquadSplit",
    "question_digest",
    "squad_split",
]

SQUAD_MANIFEST = Path(__file__).resolve().parent / "data" / "squad_held_split.json"

IPC_DEV = ("dev",)
IPC_LATER = ("heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6")
IPC_HELD = ("heldout7", "heldout8", "heldout9")
IPC_JUDGE = ("heldout9",)
"""The held-out judge of the provision rerank: ``bench/`` runs it only when asked (``--judge``)."""
IPC_BENCH_TAGS = {f"held{name.removeprefix('heldout')}": name for name in (*IPC_LATER[1:], *IPC_HELD)}
"""``bench/``'s names for the sets written after the first held-out one: ``held2`` -> ``heldout2`` .. ``held9``."""

HALUEVAL = {"dev": range(0, 250), "held": range(250, 500)}


@dataclass(frozen=True)
class SquadSplit:
    dev: tuple[str, ...]
    held: tuple[str, ...]
    retired_held: tuple[str, ...]
    excluded_ids: frozenset[str]

    def titles(self, split: str) -> list[str]:
        return list(self.dev if split == "dev" else self.held)


def question_digest(article: dict) -> str:
    """sha256 of an article's questions as canonical JSON: [[id, question, is_impossible], ...] in file order."""
    rows = [[qa["id"], qa["question"], bool(qa["is_impossible"])] for p in article["paragraphs"] for qa in p["qas"]]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def squad_split(articles: Sequence[dict], manifest: Path | None = None) -> SquadSplit:
    """The recorded split of these articles: held as the manifest lists them (each checked against its question
    hash), every other title dev. ``ConfigError`` when a held article is missing or its questions differ."""
    path = manifest or SQUAD_MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        held = {h["title"]: h["sha256"] for h in data["held"]}
        retired = tuple(data.get("retired_held", ()))
        excluded = frozenset(data.get("excluded_ids", ()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read the SQuAD held split {path}: {exc}") from exc
    by_title = {a["title"]: a for a in articles}
    problems = [f"{t}: not in the data" if t not in by_title else f"{t}: its questions differ from the recorded hash"
                for t, digest in held.items() if t not in by_title or question_digest(by_title[t]) != digest]
    if problems:
        raise ConfigError(f"the SQuAD held split {path.name} does not match the data: " + "; ".join(problems))
    return SquadSplit(dev=tuple(sorted(t for t in by_title if t not in held)), held=tuple(sorted(held)),
                      retired_held=retired, excluded_ids=excluded)
