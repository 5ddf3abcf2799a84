"""The right provision: rerank a short question's fused candidates by how well each covers what is asked.

Rank fusion knows which provisions are about the topic ("hurt"); it does not see the qualifiers that tell
neighbouring provisions apart ("with a knife" -> s.324 *hurt by dangerous weapons*, not s.323 *hurt*; "for
two weeks" -> s.344 *ten or more days*). Each of the first ``RERANK_POOL`` fused candidates gets measured
features:

* ``cosine``    dense similarity of question and chunk;
* ``coverage``  share of the question's keywords found in the chunk (exact, stemmed);
* ``both_first`` / ``neither_first``: whether dense and BM25 both / neither ranked the chunk first;
* ``prior``     ``1 / fused rank`` (where rank fusion placed it before the rerank);
* ``title_fit`` how well the provision's title covers the question's content words: for each word the best
  similarity to a title word (1 for the same stem, else the MiniLM cosine of the two words), averaged;
* ``unasked``   the share of the title's own qualifiers the question does not ask for: for each title word,
  1 minus its best similarity to a question word or expansion, averaged ("by night", "habitually" when the
  question says neither);
* ``text_fit``  ``title_fit`` measured against the chunk's whole text.

Two fitted models turn them into a confidence (``rerank``):

* ``share``: a conditional logit over the pool (``RANK_COEFFICIENTS``; softmax of a linear score), the
  probability that a candidate is the asked provision *given* that the pool holds it;
* ``in_pool``: a logistic model on the reranked first candidate (``POOL_COEFFICIENTS``: cosine, coverage,
  agreement), the probability that the pool holds the asked provision at all (low for off-topic questions).

A candidate's confidence is ``in_pool * share``. Word similarities come from the embedder the index was
built with (single words encoded once per process, ``WordVectors``): knife -> cutting/weapon is measured,
not a list grown per question. Both models were fitted on the dev, held-out and held2-held7 IPC questions
(with 150 off-topic SQuAD ones); heldout8 and heldout9 were never fitted. ``bench/retrieval_eval.py
--fit-rerank`` (penalised Newton fit, rewritten after the fact) reproduces ``POOL_COEFFICIENTS`` closely but
not ``RANK_COEFFICIENTS``: its own rank fit scores dev R@1 .782 in-sample against .873 for the shipped ones,
so the shipped ones stay until a refit is measured end to end. Measured there (in-sample): the title/text features barely move first place
(dev R@1 .909 -> .873, fresh sets unchanged); what they buy is a confidence that knows when two provisions
are close (``stages.retrieval.context`` then shows them side by side).

>>> feats = CandidateFeatures(cosine=0.6, coverage=0.5, both_first=0.0, neither_first=0.0, prior=1.0,
...                           title_fit=0.8, unasked=0.1, text_fit=0.8)
>>> worse = CandidateFeatures(cosine=0.5, coverage=0.5, both_first=0.0, neither_first=1.0, prior=0.5,
...                           title_fit=0.4, unasked=0.6, text_fit=0.5)
>>> confidences = rerank([feats, worse])
>>> assert confidences[0] > confidences[1] and sum(confidences) <= 1.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass

import numpy as np

from stages.ports import Embedder
from stages.text.normalise import search_terms, stem

__all__ = ["CandidateFeatures", "WordVectors", "candidate_features", "rerank", "RANK_COEFFICIENTS",
           "POOL_COEFFICIENTS", "RERANK_POOL", "CLOSE_RATIO", "content_terms"]

STAGE_VERSION = "rerank.v1"

RERANK_POOL = 10
"""How many fused candidates the rerank reorders (the rest keep their fused order below them)."""

# Fitted by bench/retrieval_eval.py --fit-rerank (see the module docstring).
RANK_COEFFICIENTS: tuple[float, ...] = (3.110, 0.024, 0.653, -0.507, 2.111, 1.715, -2.047, 3.111)
"""Conditional-logit weights, in the order of ``CandidateFeatures``."""
POOL_COEFFICIENTS: tuple[float, ...] = (-8.686, 15.187, 0.939, 0.497, 0.723)
"""Logistic weights of (1, cosine, coverage, both_first, neither_first) of the reranked first candidate."""
CLOSE_RATIO = 0.3
"""A further provision is close to the first when its confidence is at least this share of the first's
(``stages.retrieval.context`` then shows it beside the first); chosen on the fitted sets, see the README."""

# Words that frame a legal question or a provision's title without saying what it is about.
_FRAME_WORDS = frozenset(
    stem(w)
    for w in """what which who whom how why when where happen happens happened punishment punishments penalty
    penalties punished punishable punish offence offences crime crimes criminal law laws legal illegal section
    act case get give gets someone somebody anyone person people thing something does say says tell please
    whoever shall mean means said commit commits committed""".split()
)
_SAME_WORD = 1.0


@dataclass(frozen=True)
class CandidateFeatures:
    cosine: float
    coverage: float
    both_first: float
    neither_first: float
    prior: float
    title_fit: float
    unasked: float
    text_fit: float

    def vector(self) -> tuple[float, ...]:
        return astuple(self)


def _sigmoid(logit: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))


def rerank(
    pool: Sequence[CandidateFeatures],
    rank_coefficients: Sequence[float] = RANK_COEFFICIENTS,
    pool_coefficients: Sequence[float] = POOL_COEFFICIENTS,
) -> list[float]:
    """Each candidate's confidence ``in_pool * share`` (see the module docstring), in the order given."""
    if not pool:
        return []
    scores = np.asarray([sum(w * x for w, x in zip(rank_coefficients, f.vector(), strict=True)) for f in pool])
    shares = np.exp(scores - scores.max())
    shares /= shares.sum()
    top = pool[int(np.argmax(shares))]
    in_pool = _sigmoid(sum(w * x for w, x in zip(pool_coefficients, (1.0, top.cosine, top.coverage, top.both_first,
                                                                    top.neither_first), strict=True)))
    return [float(in_pool * share) for share in shares]


def content_terms(text: str) -> tuple[str, ...]:
    """Stemmed content words of ``text`` without the words that only frame a question or a title."""
    return tuple(dict.fromkeys(t for t in search_terms(text) if t not in _FRAME_WORDS and not t.isdigit()))


class WordVectors:
    """Single-word vectors from an embedder, each word encoded once per instance (a query touches ~50 words)."""

    def __init__(self, embedder: Embedder, limit: int = 200_000) -> None:
        self.embedder = embedder
        self._memo: dict[str, np.ndarray] = {}
        self._limit = limit

    def vectors(self, words: Iterable[str]) -> dict[str, np.ndarray]:
        words = list(dict.fromkeys(words))
        missing = [w for w in words if w not in self._memo]
        if missing:
            if len(self._memo) + len(missing) > self._limit:
                self._memo.clear()
            for word, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._memo[word] = np.asarray(vector, dtype=np.float32)
        return {w: self._memo[w] for w in words}

    def similarity(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        """(len(left), len(right)) cosine matrix; the same stem scores 1."""
        if not left or not right:
            return np.zeros((len(left), len(right)), dtype=np.float32)
        vectors = self.vectors([*left, *right])
        a = np.vstack([vectors[w] for w in left])
        b = np.vstack([vectors[w] for w in right])
        a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-9)
        b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-9)
        sims = np.clip(a @ b.T, 0.0, 1.0)
        for i, w in enumerate(left):
            for j, u in enumerate(right):
                if w == u:
                    sims[i, j] = _SAME_WORD
        return sims


def _fit(question_words: Sequence[str], words: Sequence[str], vectors: WordVectors) -> float:
    """Mean over the question's words of their best similarity to ``words``."""
    if not question_words or not words:
        return 0.0
    return float(vectors.similarity(question_words, words).max(axis=1).mean())


def _unasked(title_words: Sequence[str], asked: Sequence[str], vectors: WordVectors) -> float:
    """Mean over the title's words of 1 - their best similarity to what the question asks."""
    if not title_words:
        return 0.0
    if not asked:
        return 1.0
    return float((1.0 - vectors.similarity(title_words, asked).max(axis=1)).mean())


def candidate_features(
    question_words: Sequence[str],
    asked_words: Sequence[str],
    title: str | None,
    text: str,
    *,
    cosine: float,
    coverage: float,
    firsts: int,
    fused_rank: int,
    vectors: WordVectors,
) -> CandidateFeatures:
    """The rerank features of one candidate (see the module docstring).

    ``question_words``: the question's content terms (``content_terms``); ``asked_words``: those plus the
    analyser's expansions; ``firsts``: how many rankings (dense, BM25) put the candidate first.
    """
    title_words = content_terms(title or "")
    text_words = content_terms(text)
    return CandidateFeatures(
        cosine=cosine,
        coverage=coverage,
        both_first=float(firsts >= 2),
        neither_first=float(firsts <= 0),
        prior=1.0 / max(1, fused_rank),
        title_fit=_fit(question_words, title_words, vectors),
        unasked=_unasked(title_words, asked_words, vectors),
        text_fit=_fit(question_words, text_words, vectors),
    )
