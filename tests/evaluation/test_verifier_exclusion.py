"""No item an eval suite scores was trained on: the shipped verifier's training keys against every scored text."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from evaluation.scored_items import scored_texts
from flows.backends import VERIFIER_DIR
from stages.adapters.onnx_verifier import read_card

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def trained_keys() -> set[int]:
    card = read_card(VERIFIER_DIR)
    path = VERIFIER_DIR / card.train_hashes_file
    assert hashlib.sha256(path.read_bytes()).hexdigest() == card.train_hashes_sha256  # the file the card names
    keys = np.load(path)
    assert keys.dtype == np.uint64 and len(keys) > 10_000
    return set(keys.tolist())


def test_no_scored_question_or_passage_was_trained_on(trained_keys, shared_data) -> None:
    scored = scored_texts(shared_data)
    assert len(scored.questions) > 6_000 and len(scored.passages) > 600  # SQuAD, HaluEval, IPC sets, ...
    hits = [k for k in scored.questions | scored.passages if int(k[:16], 16) in trained_keys]
    assert hits == []


def test_the_keys_do_hold_what_was_trained_on(trained_keys, shared_data) -> None:
    # IPC s.379 was trained on (its own title questions, its neighbours' negatives), with or without its heading.
    import json

    from stages.training.exclusion import text_key
    from stages.training.statute_pairs import StatuteSection

    record = next(r for r in json.loads((shared_data / "indian-acts-json" / "ipc.json").read_text())
                  if str(r["Section"]) == "379")
    section = StatuteSection("ipc", "379", record["section_title"], record["section_desc"])
    assert {int(text_key(section.passage)[:16], 16), int(text_key(section.text)[:16], 16)} & trained_keys


def test_the_card_counts_what_was_dropped_as_eval_items() -> None:
    card = read_card(VERIFIER_DIR)
    dropped = dict(card.excluded)
    assert dropped.get("question scored by an eval suite", 0) > 0
