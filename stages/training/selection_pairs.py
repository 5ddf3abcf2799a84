"""Verifier training pairs from answer-selection data: does this sentence or passage answer the question?

* QNLI and WikiQA give (question, sentence, label): a sentence that answers the question or one that does
  not (``sentence_selection_pairs``).
* SubjQA gives (question, product review, answer span or none): a review with no answer to its question is an
  unanswerable pair; reviews are cut to passages like SQuAD's, the one holding the answer span kept
  (``review_pairs``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from contracts.verifier import LabelledPair, VerifierPair
from stages.training.squad_pairs import _closest, _holding, paragraph_passages

__all__ = ["review_pairs", "sentence_selection_pairs"]


def sentence_selection_pairs(rows: Iterable[tuple[str, str, bool]], *, source: str) -> list[LabelledPair]:
    """``rows`` of (question, sentence, answers it?) -> answers pairs (grouped by question)."""
    out: list[LabelledPair] = []
    for question, sentence, label in rows:
        if question.strip() and sentence.strip():
            out.append(LabelledPair(pair=VerifierPair(task="answers", text=question.strip(), passage=sentence.strip()),
                                    label=1 if label else 0, source=f"{source}.{'answer' if label else 'other'}_sentence",
                                    group=f"{source}:{question.strip()}"))
    return out


def review_pairs(
    rows: Iterable[tuple[str, str, str | None]], *, source: str,
    split_sentences: Callable[[str], list[str]], window_words: int = 150,
) -> list[LabelledPair]:
    """``rows`` of (question, review, answer span or None) -> answers pairs; the passage holding the span (1),
    or for an unanswered question the passage sharing most of its words (0)."""
    out: list[LabelledPair] = []
    for question, review, span in rows:
        passages = paragraph_passages(review, split_sentences, window_words)
        if not question.strip() or not passages:
            continue
        if span:
            offset = review.find(span)
            passage = _holding(passages, offset) if offset >= 0 else None
            if passage is None or span not in passage[2]:
                continue
            label, kind = 1, "answered"
        else:
            passage, label, kind = _closest(passages, question), 0, "unanswered"
        out.append(LabelledPair(pair=VerifierPair(task="answers", text=question.strip(), passage=passage[2]),
                                label=label, source=f"{source}.{kind}", group=f"{source}:{question.strip()}"))
    return out
