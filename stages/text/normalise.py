"""The one normaliser: what a word is, for every part of the chain that compares words.

BM25 (``stages.index.bm25``) and the query analyser and reranker (``stages.retrieval``) count **search terms**;
the grounding checks (``stages.grounding``: precheck, question alignment, validation, claim details, through
``stages.text.units``) compare the **claim terms** of the question, the evidence and the answer. Both are made
here, by the same three steps, so that a word retrieval found a chunk by is the word the checks find in it:

1. **tokens** (:func:`words`): the text folded (lower case, accents dropped: "Nyāya" -> "nyaya"), then every
   run of ASCII letters and digits. "498A" stays one token; "s. 420" is "s", "420"; "u/s" is "u", "s".
2. **stop words**: one list of English function words, and two uses of it (below).
3. **stems** (:func:`stem`): Snowball English (Porter2, through ``PyStemmer``): "punished", "punishes" and
   "punish" meet at "punish", "tried", "tries" and "try" at "tri", "offences" and "offence" at "offenc",
   "carelessly", "carelessness" and "careless" at "careless".

Where this departs from plain Snowball and plain English on purpose, for statutes (each rule is the code
below it; the figures are the eval's, before and after each rule):

* **A noun or adjective made with "-ment", "-al", "-ic" or "-ion" keeps its suffix** (:data:`KEPT_DERIVATIONS`),
  where Snowball would cut it: "punishment" is not "punish", "territorial" not "territory", "prohibition" not
  "prohibit", "phenazinic" not "phenazine"; it still loses its inflection ("punishments" -> "punishment"). A
  statute names different things by them: "Punishment for ..." heads the provision that sets a penalty,
  while "shall be punished" is in most provisions; a question about a "territory" asks for the extent clause,
  not for "extra-territorial offences". Plain Snowball cost the IPC dev set three questions at rank 1
  (R@1 0.933 -> 0.893: "punishment for taking part in a riot" ranked the riot provisions without a penalty
  first) and let through HaluEval's "Phenazinic acid" for a question about phenazine; kept, dev is back at
  0.933 and the later and held IPC sets keep Snowball's gains. Its cost, measured and kept: AILA's long fact
  patterns (which name "investigation", "conviction", "payment" where the statute has the verb) lose a first
  hit, R@1 0.046 -> 0.041 and MRR 0.282 -> 0.269 (plain Snowball: 0.046 and 0.293, but IPC dev R@1 0.893;
  keeping "-ment" alone: AILA 0.041, dev 0.920). No suffix set tried keeps both.
* **An "-able" adjective meets its verb** (Snowball cuts "-able" only from long words): "punishable",
  "bailable", "compoundable" and "solvable" stem as "punish", "bail", "compound", "solv"; a base shorter than
  four letters keeps the word ("payable", "capable", "table").
* **Search stop words keep the statute's own function words.** :data:`SEARCH_STOPWORDS` is the English
  function words plus the filler of how people ask ("can someone get ..."); it keeps "shall", "may", "act",
  "thereof": a provision is worded with them, and BM25's IDF already weighs them down.
* **Claim stop words drop them.** :data:`CLAIM_STOPWORDS` is the function words plus the statute's connectives
  ("shall", "upon", "thereof", "whereas") and the verbs of attribution ("according to [A]", "[A] states"): an
  answer sentence says them about every provision, so they carry no claim a check could hold against the
  evidence. Negations ("not", "no", "nor") are stop words in both lists, never dropped from the text: the
  grounding checks read every word (``stages.text.units.word_stems``) where a negation matters.
* **A token with a digit is an identifier, never stemmed**: section numbers ("498a", "304b", "420"), years.
* **One-letter tokens are no search terms** ("s" of "s. 420", the "a" of "clause (a)"); digits are ("7").
* **Legal abbreviations read as the word**: "sec"/"secs" -> "section", "cl"/"cls" -> "clause", "sch" ->
  "schedule", "govt" -> "government" (:data:`ABBREVIATIONS`), so "sec. 420" and "section 420" meet.

``normaliser_spec()`` names all of this (and fingerprints its behaviour on a probe) beside a saved BM25
vocabulary (``stages.index.saved_params``): an index made under another normaliser gets its BM25 rebuilt.

>>> search_terms("The punishment for Cheating under sec. 498A")
['punishment', 'cheat', 'section', '498a']
>>> sorted(claim_terms("According to the Act, whoever is punished shall pay"))
['act', 'pay', 'punish', 'whoever']
"""

from __future__ import annotations

import hashlib
import json
import os.path
import re
import threading
import unicodedata
from functools import lru_cache
from importlib.metadata import version

import Stemmer

__all__ = [
    "NORMALISER_VERSION",
    "ABBREVIATIONS",
    "SEARCH_STOPWORDS",
    "CLAIM_STOPWORDS",
    "KEPT_DERIVATIONS",
    "fold",
    "words",
    "stem",
    "search_terms",
    "claim_terms",
    "normaliser_spec",
]

NORMALISER_VERSION = "normalise.v1"
"""Bump on any change to the rules here: a saved BM25 vocabulary is only valid for the normaliser that made it.
``normaliser_spec`` also fingerprints the behaviour itself, as a guard against a change left unbumped."""

_TOKEN = re.compile(r"[a-z0-9]+")

# English function words: a stop word in every use.
_FUNCTION_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves""".split()
)
# How people ask ("can someone get jail for ..."): filler in a query, not a term to look up.
_ASKING_FILLER = frozenset("someone somebody anyone anybody something thing things get gets got getting".split())
# The statute's connectives and modals: in every provision, so no claim rests on them.
_STATUTE_CONNECTIVES = frozenset(
    """shall may must might upon unless whether whereas thereof therein thereto hereby herein within without
    per either neither whose""".split()
)
# Attribution and discourse words an answer wraps a claim in ("according to [A]", "[A] states", "moreover").
_ATTRIBUTION = frozenset(
    """according accordingly says say said states stated provides provided additionally also furthermore
    moreover thus hence therefore however""".split()
)

SEARCH_STOPWORDS: frozenset[str] = _FUNCTION_WORDS | _ASKING_FILLER
"""Words BM25 and the query analyser skip (matched before stemming)."""

CLAIM_STOPWORDS: frozenset[str] = _FUNCTION_WORDS | _STATUTE_CONNECTIVES | _ATTRIBUTION
"""Words that carry no claim: the grounding checks skip them as content words (matched before stemming)."""

ABBREVIATIONS: dict[str, str] = {
    "sec": "section", "secs": "section", "cl": "clause", "cls": "clause", "sch": "schedule", "govt": "government",
}
"""Legal abbreviations read as the word they shorten (before stemming)."""

_STEMMER_LIBRARY = f"PyStemmer {version('PyStemmer')} (Snowball english)"
_local = threading.local()  # a PyStemmer object is not safe to share between threads


def _snowball(word: str) -> str:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer.stemWord(word)


KEPT_DERIVATIONS: tuple[str, ...] = ("ment", "al", "ic", "ion")
"""Derivational suffixes a stem keeps (the first statute rule in the module docstring)."""
# The inflections a word may carry after a kept derivational suffix ("punish|ment|s", "crimin|al|ly").
_INFLECTIONS = ("s", "ly")
# What Snowball's inflectional steps change on their own: a final "e", "d" (of "-ed" after "e"), "y" -> "i",
# "ll" -> "l".
_LONE_INFLECTIONS = frozenset({"", "e", "d", "y", "l"})


def _kept_derivation(word: str, snowball: str) -> str:
    """``snowball`` (Snowball's stem of ``word``) unless it cut one of :data:`KEPT_DERIVATIONS`; then ``word``
    with that suffix kept and only its inflection taken off.

    >>> [_kept_derivation(w, _snowball(w)) for w in ("punishments", "punished", "territorial", "criminally", "relatives")]
    ['punishment', 'punish', 'territorial', 'criminal', 'relat']
    """
    common = len(os.path.commonprefix([word, snowball]))
    removed, added = word[common:], snowball[common:]
    if added not in ("", "e", "i") or removed in _LONE_INFLECTIONS:
        return snowball  # one of Snowball's own forms ("dying" -> "die"), or a plain inflection
    suffix = removed
    for ending in _INFLECTIONS:
        if removed.endswith(ending):
            suffix = removed[: -len(ending)]
            break
    if not suffix.endswith(KEPT_DERIVATIONS):
        return snowball  # an inflection, or a derivation Snowball may cut ("carelessness" -> "careless")
    return word[:common] + suffix  # "punish" + "ment" ("punishments"), "criminal" ("criminally")


def fold(text: str) -> str:
    """Lower case without accents ("Nyāya" -> "nyaya", "Besançon" -> "besancon").

    >>> fold("Bharatiya Nyāya Sanhitā")
    'bharatiya nyaya sanhita'
    """
    if text.isascii():
        return text.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    """The text's tokens: folded, then every run of ASCII letters and digits, in order, stop words included.

    >>> words("Whoever commits Theft, u/s 379 of the I.P.C.")
    ['whoever', 'commits', 'theft', 'u', 's', '379', 'of', 'the', 'i', 'p', 'c']
    """
    return _TOKEN.findall(fold(text))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A token's stem: Snowball English, under the statute rules above (a token with a digit stays whole, a
    legal abbreviation reads as its word, "-able" meets its verb, a kept derivation stays). Expects a token of
    :func:`words` (folded).

    >>> [stem(w) for w in ("offences", "offence", "cheating", "punished", "punishable", "punishment", "498a", "sec")]
    ['offenc', 'offenc', 'cheat', 'punish', 'punish', 'punishment', '498a', 'section']
    """
    if any(c.isdigit() for c in word):
        return word
    word = ABBREVIATIONS.get(word, word)
    able = word.removesuffix("s")
    if able.endswith("able") and len(able) >= 8:
        word = able[:-4]  # "punishable" -> "punish", "bailable" -> "bail"
    return _kept_derivation(word, _snowball(word))


def search_terms(text: str) -> list[str]:
    """The terms BM25 counts and the query analyser reads: tokens, search stop words and one-letter tokens
    (digits excepted) dropped, stemmed, in order.

    >>> search_terms("Can someone get 7 years for stealing under s. 379?")
    ['7', 'year', 'steal', '379']
    """
    return [stem(t) for t in words(text) if t not in SEARCH_STOPWORDS and (len(t) > 1 or t.isdigit())]


def claim_terms(text: str) -> frozenset[str]:
    """The stems of the words of ``text`` that can carry a claim (claim stop words dropped).

    >>> sorted(claim_terms("It is not punishable, moreover, under the said Act"))
    ['act', 'punish']
    """
    return frozenset(stem(w) for w in words(text) if w not in CLAIM_STOPWORDS)


# Words that go through every rule of search_terms (case, accents, the stop list, abbreviations, one-letter
# tokens, digits, Snowball's steps): their output is hashed into the spec, so a change to any rule shows up even if
# NORMALISER_VERSION is not bumped.
_NORMALISER_PROBE = (
    "The Offences, offences; THEFTS & cheating punished parties boxes glasses bus axis class a b 7 498A "
    "s. 420 sec. 304B Whoever someone shall act stealing applies dies kissed Sanhitā Nyāya punishment ing ed "
    "employer employee relational generously hopefulness"
)


def normaliser_spec() -> dict[str, object]:
    """What turns text into search terms, as saved beside a BM25 vocabulary: version, tokens, stop list,
    stemmer, and a fingerprint of the behaviour on a probe text.

    >>> spec = normaliser_spec()
    >>> spec["version"] == NORMALISER_VERSION and spec["stopwords"] == len(SEARCH_STOPWORDS)
    True
    """
    stop_list = "\n".join(sorted(SEARCH_STOPWORDS)).encode("utf-8")
    probe = json.dumps(search_terms(_NORMALISER_PROBE)).encode("utf-8")
    return {
        "version": NORMALISER_VERSION,
        "tokenizer": "citebound.normalise.search_terms",
        "lowercase": True,
        "fold_accents": True,
        "token_pattern": _TOKEN.pattern,
        "min_token_chars": 2,  # digits exempt
        "stopwords": len(SEARCH_STOPWORDS),
        "stopwords_sha256": hashlib.sha256(stop_list).hexdigest(),
        "stemmer": "snowball english; -ment -al -ic -ion kept; -able meets its verb; tokens with a digit unstemmed; "
                   "legal abbreviations expanded",
        "stemmer_library": _STEMMER_LIBRARY,
        "probe_sha256": hashlib.sha256(probe).hexdigest(),
    }
