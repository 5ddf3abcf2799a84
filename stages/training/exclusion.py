"""Keeping eval items out of training: pairs whose question or passage an eval suite scores are dropped.

Texts are compared by a key that ignores case, accents-as-compatibility forms, punctuation and spacing, so a
re-typed copy of an eval question still matches. The trained pairs' keys are shipped with the model as 8-byte
prefixes (``train_key_prefixes``), so a test can show, without the training data, that no eval item was
trained on.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from contracts.verifier import LabelledPair

__all__ = ["exclude_scored", "normalised", "pair_keys", "text_key", "train_key_prefixes"]

_WORD = re.compile(r"[a-z0-9]+")
# A passage shorter than this (normalised characters) is too generic to count as a copy of a scored one.
_MIN_PASSAGE = 40


def text_key(text: str) -> str:
    """sha256 of the text's lower-case alphanumeric words joined by single spaces.

    >>> text_key("What is  Theft?") == text_key("what is theft")
    True
    """
    return hashlib.sha256(normalised(text).encode()).hexdigest()


def pair_keys(item: LabelledPair) -> tuple[str, str]:
    """(question key, passage key): the question is the asked text (a claim's question when it has one)."""
    pair = item.pair
    asked = pair.question if pair.task == "supports" and pair.question.strip() else pair.text
    return text_key(asked), text_key(pair.passage)


def normalised(text: str) -> str:
    """The text as ``text_key`` hashes it: lower-case alphanumeric words joined by single spaces."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


def exclude_scored(
    pairs: Sequence[LabelledPair], scored_questions: frozenset[str], scored_passages: str
) -> tuple[list[LabelledPair], Counter[str]]:
    """The pairs none of whose texts an eval suite scores, and how many were dropped for which reason.

    ``scored_questions`` are ``text_key``s; ``scored_passages`` is every scored passage ``normalised``, one per
    line: a pair is dropped when its passage is one of them or a part of one (a sentence cut from a scored
    paragraph is still that paragraph's text).
    """
    kept: list[LabelledPair] = []
    dropped: Counter[str] = Counter()
    for item in pairs:
        question, _ = pair_keys(item)
        passage = normalised(item.pair.passage)
        if question in scored_questions:
            dropped["question scored by an eval suite"] += 1
        elif len(passage) >= _MIN_PASSAGE and passage in scored_passages:
            dropped["passage in a scored passage"] += 1
        else:
            kept.append(item)
    return kept, dropped


def train_key_prefixes(pairs: Iterable[LabelledPair]) -> np.ndarray:
    """Sorted unique uint64 prefixes (first 8 bytes, big-endian) of every question and passage key trained on."""
    keys = {k for item in pairs for k in pair_keys(item)}
    return np.array(sorted(int(k[:16], 16) for k in keys), dtype=np.uint64)
