"""Question-evidence alignment: the question's specifics must be in the evidence before anything is generated.

A question can retrieve a confident, on-topic paragraph and still not be answered by it: "Which building was
vacated *three* times ...?" over a paragraph where it was vacated *twice*, "a palm house with *tropic* plants"
over one whose plants are of the *subtropics*. Such a question differs from the evidence in one detail, so the
detail is what is checked. The question's **specifics** are:

* **quantities**: numbers in digits or words ("eight", "1,500"), compared as numbers, so "eight" != "seven";
  a duration compares as a duration ("two weeks" is carried by "ten days or more", not by "thirty days or
  more"); a century or a decade as the years it spans ("the 14th century" is carried by "1350" or "the
  fourteenth century", not by "1418");
* **names**: capitalised words inside the question ("Byzantine", "Rollo", "EU") and acronyms;
* **rare terms**: other content words that are rare in English at large (Zipf frequency below
  ``RARE_ZIPF`` in ``wordfreq``'s multi-source word list): "tropic", "maternal", "ivorywork". Common words
  ("country", "located", "happen") are left to the retriever, since paraphrase changes them freely: requiring
  every question word in the gold paragraph refuses most unanswerable SQuAD questions but keeps 17% of the
  answerable ones.

A specific is carried by a chunk when the chunk has the word itself, a word of the same light stem or sharing
a prefix of at least ``MIN_PREFIX`` letters ("Norman" ~ "Normandy"), or, for a rare term, one of the statute
words ``stages.retrieval.query_analysis`` maps it to. All specifics must be carried by **one** chunk of the pack: the
answer is read from one passage, and a question assembled from two passages' details is exactly the kind
this check exists to catch; within the chunk they must meet in ``WINDOW_SENTENCES`` consecutive sentences
(on the SQuAD dev articles, a whole-chunk test refused 57.7% of the unanswerable questions the chain answered
or refused before, keeping 56.5% answered right; two sentences 61.6% / 55.5%; one sentence 67.0% / 52.2%).
The refusal names what the best-aligned chunk lacks
(``question_detail_missing``: "tropic").

>>> sorted(question_specifics("Which building was vacated three times for the Church's General Assembly?").names)
['assembly', 'church', 'general']
>>> sorted(question_specifics("Which building was vacated three times for the Church's General Assembly?").quantities)
['3']
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os.path
import re
from collections.abc import Callable

from stages.retrieval.query_analysis import analyze_query, reference_spans
from stages.text.normalise import CLAIM_STOPWORDS, fold, stem
from stages.text.units import content_words, numbers_in, split_sentences

__all__ = [
    "STAGE_VERSION",
    "RARE_ZIPF",
    "MIN_PREFIX",
    "Specifics",
    "question_specifics",
    "missing_specifics",
    "missing_in_passage",
    "WINDOW_SENTENCES",
    "zipf",
    "candidate_words",
    "Similarity",
    "NAME_SIMILARITY",
    "TERM_SIMILARITY",
]

STAGE_VERSION = "alignment.v1"

Similarity = Callable[[str, str], float]
"""Cosine similarity of two words (folded, lower case)."""

RARE_ZIPF = 3.5
"""A content word rarer than this in general English (Zipf scale: 3 = once per million words) is a specific."""
MIN_PREFIX = 4
SHARED_PREFIX = 0.7
"""Two words of at least 5 letters whose common prefix is this share of the shorter one are one word
("scrutinize" ~ "scrutinise", "patronized" ~ "patronising", "designated" ~ "designation")."""
TYPO_RATIO = 0.85
"""Two words of at least 6 letters this similar (difflib ratio) are one word misspelt ("scounting")."""
NEGATION_OVERLAP = 0.5
NAME_SIMILARITY = 0.75
TERM_SIMILARITY = 0.55
WINDOW_SENTENCES = 2
"""The specifics must meet within this many consecutive sentences of one chunk (a sentence and the next,
which often refers back to it: "... Elie Prioleau. He became pastor ...")."""
# "without" is left out: "without permission" words an element of an offence, not a negated fact.
_NEGATION = re.compile(r"\b(?:not|never|no|none|nothing|nor|neither|cannot)\b|n['\u2019]t\b", re.IGNORECASE)

# Words that say what is asked, not what it is about (kept in step with stages.grounding.precheck.QUESTION_WORDS).
_ASKING = frozenset(
    """what which who whom whose how why when where name named names explain describe define definition meaning
    mean means tell give list state kind type types sort much many long did does do was were is are""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*[A-Za-z]|[A-Za-z]")
_ACRONYM = re.compile(r"^[A-Z]{2,}s?$")
_CENTURY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\s+centur(?:y|ies)", re.IGNORECASE)
_DECADE = re.compile(r"\b(\d{3,4})\s*['\u2019]?s\b")
_ORDINAL_WORDS = {w: i for i, w in enumerate(
    """first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth
    fifteenth sixteenth seventeenth eighteenth nineteenth twentieth twenty-first""".split(), start=1)}
_WORD_CENTURY = re.compile(r"\b(" + "|".join(sorted(_ORDINAL_WORDS, key=len, reverse=True)) + r")\s+centur(?:y|ies)",
                           re.IGNORECASE)
# A rare word derived to describe an act or a manner ("torturing", "recklessly", "carelessness", "misbehaved")
# is reworded freely by evidence ("cruelty", "rash", "negligence", "misconduct"); a rare thing or name is not.
_DESCRIBES_CONDUCT = re.compile(r"(?:ing|ly|ness|ed|iour|ior)$")
_ANSWER_COUNT = re.compile(r"\b(?:what|which|name|list|are\s+the|were\s+the)\s+((?:two|three|four|five|six|seven|"
                           r"eight|nine|ten|\d+)\b)", re.IGNORECASE)
_YEAR = re.compile(r"\b(\d{3,4})\b")

_DAYS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "fortnight": 14, "fortnights": 14, "month": 30,
         "months": 30, "year": 365, "years": 365}
_NUMBER_WORDS = """a an one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred""".split()
_DURATION = re.compile(r"\b(\d+(?:\.\d+)?|(?:(?:" + "|".join(_NUMBER_WORDS) + r")[ -]?)+?)\s+"
                       r"(days?|weeks?|fortnights?|months?|years?)\b", re.IGNORECASE)
_AT_LEAST = re.compile(r"^\s*(?:or\s+(?:more|longer|upwards)|and\s+(?:more|above|upwards))", re.IGNORECASE)
_AT_MOST = re.compile(r"^\s*(?:or\s+less|or\s+(?:under|fewer|shorter))", re.IGNORECASE)
_BEFORE_AT_LEAST = re.compile(r"(?:more\s+than|not\s+less\s+than|at\s+least|exceeding|over|above|beyond)\s*$",
                              re.IGNORECASE)
_BEFORE_AT_MOST = re.compile(r"(?:less\s+than|not\s+more\s+than|not\s+exceeding|up\s+to|at\s+most|within|"
                             r"under)\s*$", re.IGNORECASE)


@functools.lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """How common a word is in English (wordfreq's Zipf scale, 0 for unknown words); loaded on first use."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


@dataclasses.dataclass(frozen=True)
class Specifics:
    """What a question commits to. ``quantities`` maps the text of each quantity to how it is checked."""

    quantities: dict[str, tuple[str, float, float]]
    """text -> (kind, low, high): "number" (exact value low), "years" (a year in [low, high]) or
    "days" (a duration of low days, carried by an equal duration or a limit that includes it)."""
    names: frozenset[str]
    rare: frozenset[str]
    negated: frozenset[str] = frozenset()
    """When the question is negated ("What does Article 102 *not* prohibit?"): its content words, which one
    negated sentence of the evidence must share (at least ``NEGATION_OVERLAP`` of them)."""

    def __bool__(self) -> bool:
        return bool(self.quantities or self.names or self.rare or self.negated)


def _durations(text: str) -> list[tuple[float, str, int, int]]:
    """(days, bound, start, end) for each "N unit" in the text; bound is "=", ">=" or "<=" as worded."""
    out = []
    for m in _DURATION.finditer(text):
        values = numbers_in(m.group(1) + " " + m.group(2))
        if not values and m.group(1).lower() in ("a", "an", "one"):
            values = frozenset({1.0})
        if not values:
            continue
        days = max(values) * _DAYS[m.group(2).lower()]
        after, before = text[m.end():m.end() + 20], text[max(0, m.start() - 25):m.start()]
        # The longer cue wins: "not more than" is an upper bound though it ends in "more than".
        least, most = _BEFORE_AT_LEAST.search(before), _BEFORE_AT_MOST.search(before)
        if least and most:
            least, most = (least, None) if least.start() < most.start() else (None, most)
        bound = ">=" if _AT_LEAST.search(after) or least else ("<=" if _AT_MOST.search(after) or most else "=")
        out.append((days, bound, m.start(), m.end()))
    return out


# Words a statute question capitalises to refer to a text, not to name someone: "the Code", "this Act".
_REFERENCE_WORDS = frozenset(
    """code act acts section sections article articles chapter chapters schedule schedules clause clauses rule
    rules regulation regulations constitution court courts government state states law laws sanhita""".split())
_REFERENCE_BEFORE = re.compile(r"\b(?:the|this|that|said|such|any)\s+$", re.IGNORECASE)
COMMON_ZIPF = 4.0
"""With ``phrasing`` off, a capitalised word after "the"/"this" that is this common in English (Zipf) refers
to something ("the Code", "the Court") rather than naming it."""


def question_specifics(question: str, *, phrasing: bool = True) -> Specifics:
    """The quantities, names and rare terms of a question (see the module docstring).

    ``phrasing=False`` when the verifier reads the evidence (``GenerationPolicy.verify``): only the precise
    details are kept, quantities, dates and names, since the verifier judges wording and the word rules refused
    ordinary phrasing ("prescribe", "the Code", "not"). Then rare terms and negation are not specifics, and a
    capitalised word that refers to a text ("the Code", "this Act") is not a name.

    >>> sorted(question_specifics("How does the Code define culpable homicide?", phrasing=False).names)
    []
    >>> sorted(question_specifics("How does the Code define culpable homicide?").names)
    ['code']
    """
    quantities: dict[str, tuple[str, float, float]] = {}
    # A provision or act the question names ("s. 420 IPC", "the Penal Code") is found by its section id and
    # doc code, not by its text: "This Code extends to the whole of India" answers "Where does the Penal Code
    # apply?".
    question = "".join(" " if any(a <= i < b for a, b in reference_spans(question)) else ch
                       for i, ch in enumerate(question))
    spans: list[tuple[int, int]] = []
    for m in _CENTURY.finditer(question):
        n = int(m.group(1))
        quantities[m.group(0).strip()] = ("years", 100.0 * (n - 1), 100.0 * n - 1)
        spans.append(m.span())
    for m in _WORD_CENTURY.finditer(question):
        n = _ORDINAL_WORDS[m.group(1).lower()]
        quantities[m.group(0).strip()] = ("years", 100.0 * (n - 1), 100.0 * n - 1)
        spans.append(m.span())
    for m in _DECADE.finditer(question):
        start = int(m.group(1))
        width = 100 if start % 100 == 0 else 10
        quantities[m.group(0).strip()] = ("years", float(start), float(start + width - 1))
        spans.append(m.span())
    for days, _, start, end in _durations(question):
        if question[start:end].split()[0].lower() in ("a", "an"):
            continue  # "a year" in a question is a rate or a span, seldom a detail the evidence must repeat
        quantities[question[start:end]] = ("days", days, days)
        spans.append((start, end))
    for m in _ANSWER_COUNT.finditer(question):
        spans.append(m.span(1))  # "which two treaties": how many things the answer lists, not a detail
    rest = "".join(" " if any(s <= i < e for s, e in spans) else ch for i, ch in enumerate(question))
    for value in sorted(numbers_in(rest)):
        quantities[f"{value:g}"] = ("number", value, value)

    names: set[str] = set()
    rare: set[str] = set()
    words = list(_WORD.finditer(rest))
    for i, m in enumerate(words):
        word = m.group(0).replace("\u2019", "'")
        if word.lower().endswith("'s"):
            word = word[:-2]
        lower = word.lower()
        if lower in CLAIM_STOPWORDS or lower in _ASKING or len(lower) < 2 or numbers_in(lower):
            continue
        first = i == 0 or rest[:m.start()].rstrip().endswith((".", "?", "!", ":", '"'))
        if _ACRONYM.match(word) or (word[0].isupper() and not first):
            if not phrasing and not _ACRONYM.match(word) and (lower in _REFERENCE_WORDS or (
                    _REFERENCE_BEFORE.search(rest[:m.start()]) and zipf(lower) >= COMMON_ZIPF)):
                continue
            names.add(lower)
        elif phrasing and len(lower) >= 3 and zipf(lower) < RARE_ZIPF and not _DESCRIBES_CONDUCT.search(lower):
            rare.add(lower)
    negated = frozenset(content_words(question) - {"not", "never", "no", "none", "cannot"}) if phrasing and \
        _NEGATION.search(question) else frozenset()
    return Specifics(quantities=quantities, names=frozenset(names), rare=frozenset(rare), negated=negated)


_INITIALS = re.compile(r"\b(?:[A-Z]\.){2,}|(?:\b[A-Z][a-z]+\s+){1,3}[A-Z][a-z]+")


def _word_forms(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """A text's words (folded, possessive dropped, hyphenated words also in parts, initials of runs of
    capitalised words and dotted abbreviations: "United States", "U.S." -> "us") and their light stems."""
    words: set[str] = set()
    for raw in _WORD.findall(fold(text)):
        word = raw.replace("\u2019", "'").removesuffix("'s")
        words.add(word)
        if "-" in word:
            words.update(p for p in word.split("-") if p)
    for m in _INITIALS.finditer(text):
        words.add("".join(ch for ch in m.group(0) if ch.isupper()).lower())
    return frozenset(words), frozenset(stem(w) for w in words)


def _same_word(a: str, b: str) -> bool:
    if a[:MIN_PREFIX] != b[:MIN_PREFIX]:
        return len(a) >= 6 and len(b) >= 6 and a[0] == b[0] and difflib.SequenceMatcher(None, a, b).ratio() >= TYPO_RATIO
    if a.startswith(b) or b.startswith(a):
        return True
    shorter = min(len(a), len(b))
    common = len(_common_prefix(a, b))
    if shorter >= 5 and common >= SHARED_PREFIX * shorter:
        return True
    return len(a) >= 6 and len(b) >= 6 and difflib.SequenceMatcher(None, a, b).ratio() >= TYPO_RATIO


def _common_prefix(a: str, b: str) -> str:
    return os.path.commonprefix([a, b])


def _has_word(word: str, words: frozenset[str], stems: frozenset[str]) -> bool:
    if word in words or stem(word) in stems:
        return True
    if len(word) < MIN_PREFIX:
        return False
    return any(len(w) >= MIN_PREFIX and _same_word(word, w) for w in words)


def _years(text: str) -> list[float]:
    years = [float(y) for y in _YEAR.findall(text)]
    for m in _CENTURY.finditer(text):
        years.append(100.0 * (int(m.group(1)) - 1) + 50)
    for m in _WORD_CENTURY.finditer(text):
        years.append(100.0 * (_ORDINAL_WORDS[m.group(1).lower()] - 1) + 50)
    for m in _DECADE.finditer(text):
        years.append(float(m.group(1)))
    return years


_BOUND = re.compile(r"\b(not\s+more\s+than|not\s+exceeding|not\s+less\s+than|less\s+than|more\s+than|under|below|"
                    r"up\s+to|above|over|exceeding|at\s+least)\s+(\d+(?:\.\d+)?|[a-z]+(?:[ -][a-z]+)?)", re.IGNORECASE)
_UPPER = ("not more than", "not exceeding", "less than", "under", "below", "up to")


def _bounds(text: str) -> list[tuple[Callable[[float, float], bool], float]]:
    """Limits the text states ("under twelve", "above seven", "not less than 18"): a number within one is
    carried ("a child of nine" by "above seven years of age and under twelve")."""
    out = []
    for m in _BOUND.finditer(text):
        values = numbers_in(m.group(2))
        if not values:
            continue
        cue = " ".join(m.group(1).lower().split())
        upper = cue in _UPPER
        out.append(((lambda n, b: n <= b) if upper else (lambda n, b: n >= b), max(values)))
    return out


def _carries_quantity(kind: str, low: float, high: float, text: str, numbers: frozenset[float]) -> bool:
    if kind == "number":
        return low in numbers or any(op(low, bound) for op, bound in _bounds(text))
    if kind == "years":
        return any(low <= y <= high for y in _years(text))
    for days, bound, _, _ in _durations(text):
        if (bound == "=" and days == low) or (bound == ">=" and low >= days) or (bound == "<=" and low <= days):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _statute_words(term: str) -> frozenset[str]:
    """The statute words the query analyser maps an everyday word to ("stealing" -> theft)."""
    return frozenset(w for phrase in analyze_query(term).expansions for w in phrase.lower().split())


def candidate_words(text: str) -> frozenset[str]:
    """The words of a text a name or rare term may be mapped to by similarity (folded, no stop words)."""
    words, _ = _word_forms(text)
    return frozenset(w for w in words if len(w) >= 3 and w not in CLAIM_STOPWORDS and w.isalpha())


def _similar(term: str, text_words: frozenset[str], similarity: Similarity | None, threshold: float) -> bool:
    return similarity is not None and any(similarity(term, w) >= threshold for w in text_words)


def missing_specifics(specifics: Specifics, text: str, similarity: Similarity | None = None) -> tuple[str, ...]:
    """The specifics a chunk's text does not carry, quantities first, then names, then rare terms.

    With a ``similarity`` (word cosine, e.g. MiniLM through ``stages.grounding.precheck``), a name is also carried
    by a word at least ``NAME_SIMILARITY`` close ("Irish" ~ "Ireland" 0.79, but "English" ~ "French" 0.64
    is not), a rare term by one at least ``TERM_SIMILARITY`` close ("carelessness" ~ "negligence" 0.56,
    "pornographic" ~ "obscene" 0.61; "tropic" ~ "subtropics" 0.32 is not).

    >>> spec = question_specifics("What debate lasts for 55 minutes?")
    >>> missing_specifics(spec, 'After Decision Time a "Members Debate" is held, which lasts for 45 minutes.')
    ('55',)
    """
    words, stems = _word_forms(text)
    numbers = numbers_in(text)
    out = [q for q, (kind, low, high) in specifics.quantities.items()
           if not _carries_quantity(kind, low, high, text, numbers)]
    text_words = candidate_words(text) if similarity is not None else frozenset()
    out += [n for n in sorted(specifics.names)
            if not _has_word(n, words, stems) and not _similar(n, text_words, similarity, NAME_SIMILARITY)]
    for term in sorted(specifics.rare):
        if _has_word(term, words, stems):
            continue
        if any(_has_word(w, words, stems) for w in _statute_words(term)):
            continue
        if _similar(term, text_words, similarity, TERM_SIMILARITY):
            continue
        out.append(term)
    if specifics.negated and not _carries_negation(specifics.negated, text):
        out.append("not")
    return tuple(out)


def missing_in_passage(specifics: Specifics, text: str, window: int = WINDOW_SENTENCES, title: str = "",
                       similarity: Similarity | None = None) -> tuple[str, ...]:
    """What the best window of ``window`` consecutive sentences of the text lacks (``()`` when one carries all).
    A ``title`` (the chunk's section title) belongs to every window: it names what the whole chunk is about.

    >>> spec = question_specifics("In what year was Rollo baptised in Rouen?")
    >>> missing_in_passage(spec, "Rollo was baptised in 912. He died in 930. Much later, Rouen grew.")
    ('rouen',)
    >>> missing_in_passage(spec, "Rollo came to Rouen. He was baptised there.")
    ()
    """
    sentences = split_sentences(text) or [text]
    best: tuple[str, ...] | None = None
    for start in range(max(1, len(sentences) - window + 1)):
        missing = missing_specifics(specifics, " ".join([title, *sentences[start:start + window]]), similarity)
        if not missing:
            return ()
        if best is None or len(missing) < len(best):
            best = missing
    return best or ()


def _carries_negation(terms: frozenset[str], text: str) -> bool:
    """A sentence of the text is negated and shares enough of the negated question's content words."""
    for sentence in split_sentences(text):
        if _NEGATION.search(sentence):
            shared = len(terms & content_words(sentence))
            if shared and shared >= NEGATION_OVERLAP * len(terms):
                return True
    return False
