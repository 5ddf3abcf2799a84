"""BM25 over chunk texts with ``bm25s``, scored sparsely so a query never touches every document.

``bm25s`` precomputes each (term, document) BM25 contribution into a sparse matrix; we keep that matrix
and score a query by adding up only the columns of its terms into a reusable per-thread buffer (cost ~
postings of the query terms; nothing allocated over the whole corpus per query). Tenant/project/metadata filtering is a boolean mask over documents,
applied to the gathered postings before ranking, so a filtered-out document never enters the top k.

Persistence is in memory: ``to_bytes()`` packs the score matrix, vocabulary and parameters into one
``.npz`` byte string (``bm25s.BM25.save`` only writes to a directory, which stages may not do). Like
bm25s's own ``params.index.json``, ``params`` names what the precomputed scores depend on (k1, b, method,
...); ``normaliser_spec()`` names the tokenizer, stop list and stemmer that made the vocabulary. A saved
index records both (``stages.index``), and loading it under other ones is refused.

>>> lex = LexicalIndex.build(["Whoever commits theft shall be punished", "Definition of murder"])
>>> docs, scores = lex.search(tokenize("punishment for theft"), k=2)
>>> assert list(docs) == [0] and scores[0] > 0
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
from collections.abc import Sequence

import bm25s
import numpy as np

from contracts.errors import ArtifactCorruptError

__all__ = ["LexicalIndex", "tokenize", "stem", "STOPWORDS", "NORMALISER_VERSION", "normaliser_spec"]

STAGE_VERSION = "lexical.v1"

_TOKEN = re.compile(r"[a-z0-9]+")

# A short English stop list: function words only, so that legal words ("act", "shall") stay searchable.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    someone somebody anyone anybody something thing things get gets got""".split()
)

_BM25_PARAMS = {"k1": 1.2, "b": 0.75, "method": "lucene"}
# The bm25s attributes that change the precomputed scores (the keys bm25s itself saves in params.index.json).
_SCORE_PARAMS = ("k1", "b", "delta", "method", "idf_method", "dtype", "int_dtype")

NORMALISER_VERSION = "tokenize.v1"
"""Bump on any change to ``tokenize``/``stem``/``STOPWORDS`` behaviour: a saved BM25 vocabulary is only valid
for the normaliser that made it. ``normaliser_spec`` also fingerprints the behaviour itself, as a guard."""

# Words that go through every rule of tokenize/stem (case, stop words, one-letter tokens, digits, each suffix):
# their output is hashed into the spec, so a change to any rule shows up even if the version is not bumped.
_NORMALISER_PROBE = (
    "The Offences, offences; THEFTS & cheating punished parties boxes glasses bus axis class a b 7 498A "
    "s. 420 Whoever someone shall act stealing applies dies kissed Sanhita punishment ing ed"
)


def stem(word: str) -> str:
    """A deliberately light suffix stripper (plural/-ing/-ed) so "thefts"/"theft" and "cheating"/"cheat" meet.

    >>> assert [stem(w) for w in ("offences", "cheating", "punished", "class", "420")] == ["offence", "cheat", "punish", "class", "420"]
    """
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    if word.endswith("es") and word[-3:-2] in ("c", "s", "x", "z", "h") and not word.endswith("ses"):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric tokens, stop words dropped, lightly stemmed ("498A" stays "498a").

    >>> assert tokenize("The punishment for Cheating under s. 420") == ["punishment", "cheat", "420"]
    """
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())]


def normaliser_spec() -> dict[str, object]:
    """What turns text into BM25 terms, as saved beside an index: tokenizer, stop list, stemmer, version.

    >>> spec = normaliser_spec()
    >>> spec["version"] == NORMALISER_VERSION and spec["stopwords"] == len(STOPWORDS)
    True
    """
    stop_list = "\n".join(sorted(STOPWORDS)).encode("utf-8")
    probe = json.dumps(tokenize(_NORMALISER_PROBE)).encode("utf-8")
    return {
        "version": NORMALISER_VERSION,
        "tokenizer": "citebound.lexical.tokenize",
        "lowercase": True,
        "token_pattern": _TOKEN.pattern,
        "min_token_chars": 2,  # digits exempt
        "stopwords": len(STOPWORDS),
        "stopwords_sha256": hashlib.sha256(stop_list).hexdigest(),
        "stemmer": "citebound.lexical.stem (plural/-ing/-ed suffix stripper)",
        "probe_sha256": hashlib.sha256(probe).hexdigest(),
    }


class LexicalIndex:
    """An immutable BM25 index over documents numbered 0..n-1 in the order given to ``build``."""

    def __init__(self, model: bm25s.BM25, n_docs: int) -> None:
        self._model = model
        self._n_docs = n_docs
        self._vocab: dict[str, int] = model.vocab_dict
        self._indptr: np.ndarray = model.scores["indptr"]
        self._indices: np.ndarray = model.scores["indices"]
        self._data: np.ndarray = model.scores["data"]
        self._local = threading.local()

    @classmethod
    def build(cls, texts: Sequence[str]) -> LexicalIndex:
        model = bm25s.BM25(**_BM25_PARAMS)
        # An empty token list would make bm25s refuse the corpus; "" is its own placeholder for empty documents.
        corpus_tokens = [tokenize(t) or [""] for t in texts]
        if not corpus_tokens:
            corpus_tokens = [[""]]
        model.index(corpus_tokens, show_progress=False)
        return cls(model, len(texts))

    @property
    def n_docs(self) -> int:
        return self._n_docs

    @property
    def params(self) -> dict[str, object]:
        """The BM25 parameters the scores were computed with (as bm25s saves them), and the bm25s version."""
        return {**{name: getattr(self._model, name) for name in _SCORE_PARAMS}, "bm25s_version": bm25s.__version__}

    @staticmethod
    def default_params() -> dict[str, object]:
        """``params`` of an index ``build`` makes now (to compare with a saved index's)."""
        return LexicalIndex.build([]).params

    def search(
        self, terms: Sequence[str], k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (document positions, BM25 scores) for already-tokenized terms, best first.

        ``allowed`` is a boolean mask over documents (True = may be returned); documents outside it are
        dropped before ranking. Only documents sharing at least one term with the query are returned.
        """
        term_ids = sorted({self._vocab[t] for t in terms if t and t in self._vocab})
        if not term_ids or self._n_docs == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        # Accumulate into a reusable per-thread buffer: each term's postings hold a document at most once,
        # so a fancy-index add is exact; only the touched entries are read back and reset (no sort, no
        # array over the whole corpus per query).
        totals = self._scratch()
        touched_parts = []
        for t in term_ids:
            a, b = int(self._indptr[t]), int(self._indptr[t + 1])
            docs, contributions = self._indices[a:b], self._data[a:b]
            if allowed is not None:
                keep = allowed[docs]
                docs, contributions = docs[keep], contributions[keep]
            totals[docs] += contributions
            touched_parts.append(docs)
        touched = np.concatenate(touched_parts).astype(np.int64, copy=False)
        if touched.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scores = totals[touched]
        totals[touched] = 0.0
        # A document touched by several terms appears several times with the same total: over-select, then dedupe.
        take = min(touched.size, k * len(term_ids))
        top = np.argpartition(-scores, take - 1)[:take] if touched.size > take else np.arange(touched.size)
        unique_docs, first = np.unique(touched[top], return_index=True)
        unique_scores = scores[top][first]
        # Best first; ties broken by document position so results are deterministic.
        order = np.lexsort((unique_docs, -unique_scores))[:k]
        return unique_docs[order], unique_scores[order].astype(np.float32)

    def _scratch(self) -> np.ndarray:
        buffer = getattr(self._local, "buffer", None)
        if buffer is None:
            buffer = np.zeros(self._n_docs, dtype=np.float32)
            self._local.buffer = buffer
        return buffer

    def to_bytes(self) -> bytes:
        vocab_json = json.dumps(self._vocab, sort_keys=True).encode("utf-8")
        buffer = io.BytesIO()
        np.savez(
            buffer,
            data=self._data,
            indices=self._indices,
            indptr=self._indptr,
            n_docs=np.array([self._n_docs, int(self._model.scores["num_docs"])], dtype=np.int64),
            vocab=np.frombuffer(vocab_json, dtype=np.uint8),
            params=np.frombuffer(json.dumps(self.params, sort_keys=True).encode("utf-8"), dtype=np.uint8),
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> LexicalIndex:
        try:
            with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
                n_docs, num_docs = (int(x) for x in npz["n_docs"])
                # The parameters the scores were made with (older blobs carry none: the defaults of that time).
                saved = json.loads(npz["params"].tobytes().decode("utf-8")) if "params" in npz.files else {}
                model = bm25s.BM25(**{k: v for k, v in ({**_BM25_PARAMS, **saved}).items() if k in _SCORE_PARAMS})
                model.scores = {
                    "data": npz["data"],
                    "indices": npz["indices"],
                    "indptr": npz["indptr"],
                    "num_docs": num_docs,
                }
                model.vocab_dict = json.loads(npz["vocab"].tobytes().decode("utf-8"))
        except (ValueError, KeyError, OSError) as exc:
            raise ArtifactCorruptError(f"BM25 blob is not a citebound lexical index: {exc}") from exc
        model.unique_token_ids_set = set(model.vocab_dict.values())
        model.nonoccurrence_array = None
        return cls(model, n_docs)
