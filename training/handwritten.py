"""The hand-written question set: read, checked against the texts, cleaned of eval items, split, carded.

* ``read_slices``: every ``*.jsonl`` slice under ``models/reader/handwritten/`` as ``HandwrittenQuestion``s; a line
  that does not parse or validate is a problem named ``file:line: why``, never a silent skip.
* ``check_gold``: each gold section (and ``sounds_like``) must be a section of its code's text as citebound reads
  it (``stages.provisions.parse``); a question whose gold is not there is dropped and counted.
* ``drop_eval_items``: a question equal to, or a light rewording of, an item an eval suite scores (the IPC
  question sets in ``bench/data``, the held-out sets in ``evaluation/heldout``) is dropped: equal by
  ``text_key``, or sharing at least ``NEAR_COPY`` of its word set (Jaccard) with one.
* ``split``: whole codes in ``unseen_codes`` go to the unseen-document dev split; of the rest, a question goes to
  dev when the first 8 hex of sha256(seed, id) fall under ``dev_share``. Stable: adding questions never moves
  one already placed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from contracts.handwritten import HandwrittenQuestion
from stages.training.exclusion import normalised, text_key

__all__ = ["NEAR_COPY", "OPENING", "read_slices", "check_gold", "drop_eval_items", "split", "eval_questions"]

NEAR_COPY = 0.7
# A question whose first characters (normalised) are an eval item's is its twin whatever follows (found after the
# first held run: a training question told the same story as a held one and asked for the term instead).
OPENING = 50
_WORD = re.compile(r"[a-z0-9]+")


def read_slices(folder: Path) -> tuple[list[HandwrittenQuestion], list[str]]:
    """Every question of every slice file (sorted by file name), and the problems found reading them."""
    questions: list[HandwrittenQuestion] = []
    problems: list[str] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                q = HandwrittenQuestion.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                problems.append(f"{where}: {str(exc).splitlines()[0]}")
                continue
            if q.id in seen:
                problems.append(f"{where}: id {q.id} repeated")
                continue
            seen.add(q.id)
            questions.append(q)
    return questions, problems


def check_gold(questions: Iterable[HandwrittenQuestion], sections: Mapping[str, set[str]]
               ) -> tuple[list[HandwrittenQuestion], Counter[str]]:
    """The questions whose gold section (and ``sounds_like``) their code's text has; the others counted."""
    kept: list[HandwrittenQuestion] = []
    dropped: Counter[str] = Counter()
    for q in questions:
        known = sections.get(q.code)
        if known is None:
            dropped[f"code {q.code} not read"] += 1
        elif q.section is not None and q.section not in known:
            dropped["gold section not in the code's text"] += 1
        else:
            kept.append(q)
    return kept, dropped


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(normalised(text)))


def eval_questions(root: Path) -> list[str]:
    """Every question an eval suite or held-out check scores that the repository holds as data."""
    out: list[str] = []
    for path in sorted([*(root / "bench" / "data").glob("*.jsonl"), *(root / "evaluation" / "heldout").glob("*.jsonl")]):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                text = row.get("question") or row.get("claim")
                if text:
                    out.append(text)
    return out


def drop_eval_items(questions: Sequence[HandwrittenQuestion], scored: Iterable[str]
                    ) -> tuple[list[HandwrittenQuestion], Counter[str]]:
    """The questions that are neither an eval item nor a light rewording of one (word-set Jaccard < NEAR_COPY)."""
    keys = set()
    word_sets = []
    openings = set()
    for text in scored:
        keys.add(text_key(text))
        word_sets.append(_words(text))
        openings.add(normalised(text)[:OPENING])
    kept: list[HandwrittenQuestion] = []
    dropped: Counter[str] = Counter()
    for q in questions:
        if text_key(q.question) in keys:
            dropped["an eval item, word for word"] += 1
            continue
        if len(normalised(q.question)) >= OPENING and normalised(q.question)[:OPENING] in openings:
            dropped["opens as an eval item does"] += 1
            continue
        mine = _words(q.question)
        if any(len(mine & w) >= NEAR_COPY * len(mine | w) for w in word_sets if w):
            dropped["a near copy of an eval item"] += 1
            continue
        kept.append(q)
    return kept, dropped


def split(questions: Iterable[HandwrittenQuestion], *, seed: int, dev_share: float,
          unseen_codes: Sequence[str]) -> dict[str, list[HandwrittenQuestion]]:
    """``train``, ``dev`` (a stable share by id) and ``unseen`` (whole codes never trained on; a code ending in
    ``*`` is a prefix: ``"kegy*"`` holds out every chapter of that book)."""
    out: dict[str, list[HandwrittenQuestion]] = {"train": [], "dev": [], "unseen": []}
    exact = {c for c in unseen_codes if not c.endswith("*")}
    prefixes = tuple(c[:-1] for c in unseen_codes if c.endswith("*"))
    for q in questions:
        if q.code in exact or (prefixes and q.code.startswith(prefixes)):
            out["unseen"].append(q)
            continue
        draw = int(hashlib.sha256(f"{seed}:{q.id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        out["dev" if draw < dev_share else "train"].append(q)
    return out
