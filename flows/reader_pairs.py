"""The reader's in-domain pairs as data: generated questions, the neighbours retrieval confuses them with, and
rule-made claims, written as one JSON-lines file with a card (counts by source, the inputs' sha256).

The edge resolves the retrieval (an index per code over that code's provisions, built with citebound's own
retrieval) and passes it in as ``ranked(question, code) -> provision keys, best first``; this module reads and
writes files and calls the pure builders of ``stages.training.reader_pairs``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from contracts._base import sha256_bytes
from contracts.questions import GeneratedQuestion, Provision
from contracts.store import atomic_write
from contracts.verifier import LabelledPair
from stages.training.reader_pairs import claim_pairs, question_pairs

__all__ = ["read_questions", "mine_negatives", "build_reader_pairs", "write_pairs"]

Ranked = Callable[[str, str], Sequence[str]]


def read_questions(path: Path) -> tuple[GeneratedQuestion, ...]:
    return tuple(GeneratedQuestion.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip())


def mine_negatives(questions: Sequence[GeneratedQuestion], ranked: Ranked, *, depth: int = 3
                   ) -> tuple[dict[str, tuple[str, ...]], Counter[str]]:
    """For each question, the provisions of its code that retrieval ranks at or above its source (the top
    ``depth`` when the source is not retrieved; the ``depth`` just below it when it is first): (negatives by
    question, where each question's source was found: ``first``, ``below_first``, ``not_retrieved``)."""
    out: dict[str, tuple[str, ...]] = {}
    found: Counter[str] = Counter()
    for q in questions:
        source = f"{q.code}:{q.section}"
        keys = [k for k in ranked(q.question, q.code)]
        if source in keys:
            rank = keys.index(source)
            found["first" if rank == 0 else "below_first"] += 1
            above = keys[:rank]
            out[q.question] = tuple(above) if above else tuple(keys[1: 1 + depth])
        else:
            found["not_retrieved"] += 1
            out[q.question] = tuple(keys[:depth])
    return out, found


def build_reader_pairs(provisions: Sequence[Provision], questions: Sequence[GeneratedQuestion],
                       negatives: dict[str, tuple[str, ...]], split_sentences: Callable[[str], list[str]],
                       skip_claims: frozenset[str]) -> list[LabelledPair]:
    by_key = {p.key: p for p in provisions}
    return question_pairs(questions, by_key, negatives) + claim_pairs(provisions, split_sentences, skip_claims)


def write_pairs(pairs: Sequence[LabelledPair], out_file: Path, card_file: Path, inputs: dict[str, str],
                notes: dict[str, object]) -> dict[str, object]:
    """The pairs as JSON lines and a card: counts by source and label, the inputs' sha256, the file's sha256."""
    data = "".join(p.model_dump_json() + "\n" for p in pairs).encode()
    atomic_write(out_file, data)
    counts = Counter((p.source, p.label) for p in pairs)
    card = {"file": out_file.name, "file_sha256": sha256_bytes(data), "pairs": len(pairs),
            "by_source_and_label": {f"{s}/{label}": n for (s, label), n in sorted(counts.items())},
            "inputs_sha256": dict(sorted(inputs.items())), **notes}
    atomic_write(card_file, (json.dumps(card, indent=1, sort_keys=True) + "\n").encode())
    return card
