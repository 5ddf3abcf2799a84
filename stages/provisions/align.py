"""Align an older code's sections to a newer code's: for each older section, its successor(s) or none.

Three similarities, each an (older x newer) matrix in [0, 1]: the headings' word overlap (Dice of their stems),
the texts' embedding cosine (the project's embedder, a port), and the texts' tf-idf cosine over
``stages.text.normalise.search_terms``, taken as the best over the newer section's sub-sections (a merged
section carries each older section in one of its sub-sections: IPC 379 is BNS 303(2)).

The choice is one Viterbi pass over the older code, so each pair is chosen in the context of its neighbours:
a successor at most ``order_window`` sections after the previous one keeps the codes' order (the same one again
is a merge); any other step pays ``jump_penalty`` (the BNS moved the offences against women ahead of the other
offences against the body). Choosing no successor scores ``no_successor_below`` and keeps the last position, so an
older section is matched only when its best pair in context beats that bar.

A pair is a candidate at all only with evidence: a term of the older section (heading or text) that the newer
section has too and that is not common in the older code (``AlignConfig.common_term_share``). IPC 311 is headed
"Punishment" and reads "Whoever is a thug shall be punished with imprisonment for life ...": every word it shares
with BNS 4 ("Punishments") is the code's boilerplate, and "thug" occurs nowhere in the BNS, so it has no successor,
reported with its nearest candidate and that candidate's score.

>>> older = [("1", "Theft", "whoever steals property commits theft"),
...          ("2", "Punishment for theft", "whoever commits theft shall be punished with prison"),
...          ("3", "Adultery", "a man who has intercourse with the wife of another")]
>>> newer = [("10", "Theft", "(1) whoever steals property commits theft. (2) whoever commits theft shall be punished"),
...          ("11", "Cheating", "whoever deceives any person and induces delivery of property")]
>>> [lk.to_sections for lk in align_sections(older, newer, similarities(older, newer, None), AlignConfig())]
[('10',), ('10',), ()]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from contracts.provisions import AlignConfig, LinkEvidence, ProvisionLink, ProvisionMap, ProvisionSet
from stages.ports import Embedder
from stages.provisions.parse import Section, commencement_date, subsections
from stages.text.normalise import claim_terms, search_terms

__all__ = ["STAGE_VERSION", "Similarities", "similarities", "align_sections", "build_map", "embedding_text",
           "Evidence", "evidence_terms"]

STAGE_VERSION = "align_provisions.v2"
# The embedded text of a section: its heading and the start of its text (the model reads 256 tokens at most).
_EMBED_CHARS = 1200
# A term found in at most this many older sections is never common, however small the code.
_NEVER_COMMON = 2
_SHOWN_SHARED = 8


@dataclass(frozen=True)
class Similarities:
    """The three (older x newer) similarity matrices, each in [0, 1]."""

    heading: np.ndarray
    embedding: np.ndarray
    words: np.ndarray

    def combined(self, cfg: AlignConfig) -> np.ndarray:
        total = cfg.heading_weight + cfg.embedding_weight + cfg.words_weight
        if total <= 0:
            raise ValueError("align config: the three weights sum to zero")
        return (cfg.heading_weight * self.heading + cfg.embedding_weight * self.embedding
                + cfg.words_weight * self.words) / total


def _dice(a: Sequence[frozenset[str]], b: Sequence[frozenset[str]]) -> np.ndarray:
    out = np.zeros((len(a), len(b)), dtype=np.float32)
    for i, x in enumerate(a):
        if not x:
            continue
        for j, y in enumerate(b):
            if y:
                out[i, j] = 2 * len(x & y) / (len(x) + len(y))
    return out


def _tfidf(docs: Sequence[list[str]], vocab: dict[str, int], idf: np.ndarray) -> np.ndarray:
    mat = np.zeros((len(docs), len(vocab)), dtype=np.float32)
    for r, terms in enumerate(docs):
        for term, n in Counter(terms).items():
            col = vocab.get(term)
            if col is not None:
                mat[r, col] = (1 + math.log(n)) * idf[col]
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return mat / np.where(norms > 0, norms, 1)


def _word_similarity(older: Sequence[Section], newer: Sequence[Section]) -> np.ndarray:
    old_docs = [search_terms(f"{t} {x}") for _, t, x in older]
    parts: list[list[str]] = []
    owner: list[int] = []
    for j, (_, title, text) in enumerate(newer):
        for piece in [text, *subsections(text)] if len(subsections(text)) > 1 else [text]:
            parts.append(search_terms(f"{title} {piece}"))
            owner.append(j)
    whole = [*old_docs, *(search_terms(f"{t} {x}") for _, t, x in newer)]
    df = Counter(term for doc in whole for term in set(doc))
    vocab = {term: k for k, term in enumerate(sorted(df))}
    idf = np.array([math.log((1 + len(whole)) / (1 + df[t])) + 1 for t in sorted(df)], dtype=np.float32)
    cos = _tfidf(old_docs, vocab, idf) @ _tfidf(parts, vocab, idf).T
    out = np.zeros((len(older), len(newer)), dtype=np.float32)
    for col, j in enumerate(owner):
        np.maximum(out[:, j], cos[:, col], out=out[:, j])
    return np.clip(out, 0.0, 1.0)


def embedding_text(section: Section) -> str:
    """What is embedded for one section: its heading, then the start of its text."""
    return f"{section[1]}. {section[2][:_EMBED_CHARS]}"


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1)


def similarities(older: Sequence[Section], newer: Sequence[Section], embedder: Embedder | None) -> Similarities:
    """The three matrices; without an embedder (tests, doctests) the embedding matrix is the word matrix."""
    heading = _dice([claim_terms(t) for _, t, _ in older], [claim_terms(t) for _, t, _ in newer])
    words = _word_similarity(older, newer)
    if embedder is None:
        embedding = words
    else:
        a = _unit_rows(embedder.embed([embedding_text(s) for s in older]))
        b = _unit_rows(embedder.embed([embedding_text(s) for s in newer]))
        embedding = np.clip(a @ b.T, 0.0, 1.0)
    return Similarities(heading=heading, embedding=embedding, words=words)


@dataclass(frozen=True)
class Evidence:
    """Which pairs share an uncommon term: ``older`` / ``newer`` are each section's terms (stems) that are not
    common in the older code, ``df`` how many older sections use each term (rarer is stronger evidence)."""

    older: tuple[frozenset[str], ...]
    newer: tuple[frozenset[str], ...]
    df: dict[str, int]

    def shared(self, i: int, j: int) -> tuple[str, ...]:
        """The uncommon terms older section ``i`` and newer section ``j`` share, rarest first."""
        return tuple(sorted(self.older[i] & self.newer[j], key=lambda t: (self.df.get(t, 0), t)))

    def matrix(self) -> np.ndarray:
        """(older x newer) booleans: the pair shares at least one uncommon term."""
        vocab = {t: k for k, t in enumerate(sorted(set().union(*self.older)))}
        a = np.zeros((len(self.older), len(vocab)), dtype=np.float32)
        b = np.zeros((len(self.newer), len(vocab)), dtype=np.float32)
        for i, terms in enumerate(self.older):
            a[i, [vocab[t] for t in terms]] = 1.0
        for j, terms in enumerate(self.newer):
            cols = [vocab[t] for t in terms if t in vocab]
            b[j, cols] = 1.0
        return (a @ b.T) > 0


def evidence_terms(older: Sequence[Section], newer: Sequence[Section], cfg: AlignConfig) -> Evidence:
    """Each section's terms that are not common in the older code: common = used by more than
    ``cfg.common_term_share`` of its sections and by more than two.

    >>> ev = evidence_terms([("1", "Punishment", "whoever is a thug shall be punished"),
    ...                      ("2", "Punishment for theft", "whoever commits theft shall be punished"),
    ...                      ("3", "Punishment for cheating", "whoever cheats shall be punished")],
    ...                     [("4", "Punishments", "the punishments are death and fine")], AlignConfig())
    >>> ev.shared(0, 0), sorted(ev.older[0])
    ((), ['thug'])
    """
    old = [frozenset(search_terms(f"{t} {x}")) for _, t, x in older]
    df = Counter(term for terms in old for term in terms)
    limit = max(cfg.common_term_share * len(older), _NEVER_COMMON)
    common = {term for term, n in df.items() if n > limit}
    new = [frozenset(search_terms(f"{t} {x}")) - common for _, t, x in newer]
    return Evidence(older=tuple(terms - common for terms in old), newer=tuple(new), df=dict(df))


def _viterbi(score: np.ndarray, cfg: AlignConfig) -> tuple[list[int | None], list[bool]]:
    """Each older section's successor index (None: no successor) and whether its step kept the order."""
    n, m = score.shape
    window, jump, bar = cfg.order_window, cfg.jump_penalty, cfg.no_successor_below
    # prev[p + 1]: the best total whose last successor is at p (p = -1: none yet).
    prev = np.full(m + 1, -np.inf)
    prev[0] = 0.0
    back_match = np.zeros((n, m), dtype=np.int64)  # the position p a match at j came from
    back_none = np.zeros((n, m + 1), dtype=np.int8)  # 1: the state at p was reached by a match at p
    match_rows: list[np.ndarray] = []
    for i in range(n):
        # In order: j - window <= p <= j, i.e. position index p + 1 in [j + 1 - window, j + 1].
        best_near = np.full(m, -np.inf)
        arg_near = np.zeros(m, dtype=np.int64)
        for d in range(window + 1):
            idx = np.arange(m) + 1 - d  # prev index p + 1 for each j
            ok = idx >= 0
            cand = np.where(ok, prev[np.clip(idx, 0, m)], -np.inf)
            better = cand > best_near
            best_near = np.where(better, cand, best_near)
            arg_near = np.where(better, idx, arg_near)
        far = int(np.argmax(prev))
        use_far = prev[far] - jump > best_near
        match = score[i] + np.where(use_far, prev[far] - jump, best_near)
        back_match[i] = np.where(use_far, far, arg_near)
        none = prev + bar
        # The next row's "last position p" states: matched at p now, or no successor now with p before.
        nxt = none.copy()
        took = match > nxt[1:]
        nxt[1:] = np.where(took, match, nxt[1:])
        back_none[i, 1:] = took
        match_rows.append(use_far)
        prev = nxt
    # Trace back from the best final position.
    chosen: list[int | None] = [None] * n
    in_order = [True] * n
    pos = int(np.argmax(prev))
    for i in range(n - 1, -1, -1):
        if pos > 0 and back_none[i, pos]:
            j = pos - 1
            chosen[i] = j
            in_order[i] = not bool(match_rows[i][j])
            pos = int(back_match[i, j])
        # else: no successor at i; the position is unchanged
    return chosen, in_order


def align_sections(
    older: Sequence[Section], newer: Sequence[Section], sims: Similarities, cfg: AlignConfig
) -> tuple[ProvisionLink, ...]:
    """One link for every older section, in its order (see the module doc for how the choice is made)."""
    if not older:
        return ()
    if not newer:
        raise ValueError("the newer code has no sections to align to")
    score = sims.combined(cfg)
    evidence_of = evidence_terms(older, newer, cfg)
    # A pair without evidence is no candidate: it scores 0, under any bar, so it is never chosen.
    candidate = np.where(evidence_of.matrix(), score, 0.0)
    chosen, in_order = _viterbi(candidate, cfg)
    extra: dict[int, list[int]] = {}
    taken = {j for j in chosen if j is not None}
    for j in range(len(newer)):
        if j in taken:
            continue
        i = int(np.argmax(candidate[:, j]))
        if chosen[i] is not None and candidate[i, j] >= cfg.split_above:
            extra.setdefault(i, []).append(j)
    links = []
    for i, (section, title, _) in enumerate(older):
        j = chosen[i]
        shown = j if j is not None else int(np.argmax(score[i]))
        evidence = LinkEvidence(heading=round(float(sims.heading[i, shown]), 4),
                                embedding=round(float(sims.embedding[i, shown]), 4),
                                words=round(float(sims.words[i, shown]), 4), in_order=in_order[i],
                                shared=evidence_of.shared(i, shown)[:_SHOWN_SHARED])
        if j is None:
            # Rejected for want of evidence when its nearest would have cleared the bar on score alone.
            reason = "no_evidence" if not evidence.shared and score[i, shown] >= cfg.no_successor_below else "below_bar"
            links.append(ProvisionLink(from_section=section, from_title=title, score=0.0, evidence=evidence,
                                       nearest=newer[shown][0], nearest_score=round(float(score[i, shown]), 4),
                                       reason=reason))
            continue
        splits = sorted(extra.get(i, []), key=lambda k: -score[i, k])
        links.append(ProvisionLink(from_section=section, from_title=title,
                                   to_sections=tuple(newer[k][0] for k in [j, *splits]),
                                   score=round(float(score[i, j]), 4), evidence=evidence))
    return tuple(links)


def build_map(
    older: ProvisionSet, newer: ProvisionSet, embedder: Embedder | None, cfg: AlignConfig, *,
    from_set_sha256: str = "", to_set_sha256: str = "",
) -> ProvisionMap:
    """The map of ``older``'s sections to ``newer``'s (the shas name the two sets' stored artifacts)."""
    a = [(p.section, p.title, p.text) for p in older.provisions]
    b = [(p.section, p.title, p.text) for p in newer.provisions]
    links = align_sections(a, b, similarities(a, b, embedder), cfg)
    return ProvisionMap(from_code=older.code, to_code=newer.code, from_set_sha256=from_set_sha256, to_set_sha256=to_set_sha256,
                        to_commencement=commencement_date(b),
                        embedding_model=embedder.model_name if embedder is not None else "none",
                        config=cfg, links=links)
