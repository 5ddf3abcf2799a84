"""Keeping eval items out of training: the rule on known pairs, and the shipped model's training keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from contracts.verifier import LabelledPair, VerifierPair
from stages.training.exclusion import exclude_scored, normalised, pair_keys, text_key, train_key_prefixes

pytestmark = pytest.mark.unit


def _pair(question: str, passage: str, task: str = "answers") -> LabelledPair:
    text, q = (question, "") if task == "answers" else ("an answer", question)
    return LabelledPair(pair=VerifierPair(task=task, text=text, passage=passage, question=q), label=1, source="s",
                        group="g")


def test_keys_ignore_case_punctuation_and_spacing() -> None:
    assert text_key("What is  THEFT?") == text_key("what is theft")
    assert text_key("what is theft") != text_key("what is murder")


def test_scored_questions_and_passages_are_dropped_with_their_reason() -> None:
    scored_q = frozenset({text_key("Who gave their name to Normandy?")})
    scored_p = normalised("The Normans gave their name to Normandy, a region in France. They came from Norway.")
    pairs = [
        _pair("who gave their name to normandy", "anything at all here"),                     # scored question
        _pair("Who gave their name to Normandy?", "x", task="supports"),                       # as a claim's question
        _pair("Where is Normandy?", "The Normans gave their name to Normandy, a region in France."),  # part of one
        _pair("Where is Paris?", "Paris is the capital and most populous city of France, on the Seine."),
    ]
    kept, dropped = exclude_scored(pairs, scored_q, scored_p)
    assert [p.pair.text for p in kept] == ["Where is Paris?"]
    assert dropped == {"question scored by an eval suite": 2, "passage in a scored passage": 1}


def test_train_key_prefixes_are_sorted_uint64_of_both_texts() -> None:
    pairs = [_pair("q1?", "passage one"), _pair("q1?", "passage two")]
    prefixes = train_key_prefixes(pairs)
    assert prefixes.dtype == np.uint64 and list(prefixes) == sorted(prefixes) and len(prefixes) == 3
    assert int(pair_keys(pairs[0])[0][:16], 16) in set(prefixes.tolist())
