"""BM25 over chunk texts with ``bm25s``, scored sparsely so a query never touches every document.

``bm25s`` precomputes each (term, document) BM25 contribution into a sparse matrix; we keep that matrix
and score a query by adding up only the columns of its terms into a reusable per-thread buffer (cost ~
postings of the query terms; nothing allocated over the whole corpus per query). Tenant/project/metadata filtering is a boolean mask over documents,
applied to the gathered postings before ranking, so a filtered-out document never enters the top k.

Persistence is in memory: ``to_bytes()`` packs the score matrix, vocabulary and parameters into one
``.npz`` byte string (``bm25s.BM25.save`` only writes to a directory, which stages may not do). Like
bm25s's own ``params.index.json``, ``params`` names what the precomputed scores depend on (k1, b, method,
...); ``stages.text.normalise.normaliser_spec()`` names the tokenizer, stop list and stemmer that made the
vocabulary. A saved index records both (``stages.index.search_index``), and loading it under other ones is refused.

>>> lex = LexicalIndex.build(["Whoever commits theft shall be punished", "Definition of murder"])
>>> docs, scores = lex.search(search_terms("punishment for theft"), k=2)
>>> assert list(docs) == [0] and scores[0] > 0
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Sequence

import bm25s
import numpy as np

from contracts.errors import ArtifactCorruptError
from stages.text.normalise import search_terms

__all__ = ["LexicalIndex"]

_BM25_PARAMS = {"k1": 1.2, "b": 0.75, "method": "lucene"}
# The bm25s attributes that change the precomputed scores (the keys bm25s itself saves in params.index.json).
_SCORE_PARAMS = ("k1", "b", "delta", "method", "idf_method", "dtype", "int_dtype")

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
        corpus_tokens = [search_terms(t) or [""] for t in texts]
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
