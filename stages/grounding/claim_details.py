"""The specifics a sentence commits to — named entities, dates, numbers and content words — and which of
them a body of evidence does not carry.

A claim can overlap its evidence word for word and still be false when one specific is swapped:
"Catherine Cortez Masto served as Attorney General of California" against a passage that says Nevada.
Word overlap cannot see that; a per-specific check can. This module is the shared, typed vocabulary for it:
the validator checks answer sentences with it, and a question's specifics can be checked against retrieved
evidence with the same two calls.

>>> claim = claim_details("Rollo swore fealty to King Charles IV of West Francia in 911.")
>>> claim.entities
('King Charles IV', 'West Francia')
>>> evidence = evidence_terms("Under their leader Rollo, they agreed to swear fealty to King Charles III of West Francia.")
>>> missing = unsupported_details(claim, (evidence,))
>>> missing.entities, missing.numbers
(('IV',), (911.0,))
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from stages.text import normalise
from stages.text.normalise import CLAIM_STOPWORDS, stem
from stages.text.units import META_WORDS, numbers_in, strip_citations

__all__ = [
    "STAGE_VERSION",
    "MONTHS",
    "ClaimDetails",
    "EvidenceTerms",
    "UnsupportedDetails",
    "claim_details",
    "evidence_terms",
    "unsupported_details",
]

STAGE_VERSION = "claim_details.v1"

MONTHS: frozenset[str] = frozenset(
    "january february march april may june july august september october november december".split()
)
# Capitalised words that open replies, name a document's parts or a currency, not an entity of the claim.
_NOT_ENTITIES = frozenset("yes no i section sections act article chapter clause rs re".split()) | CLAIM_STOPWORDS

# A word: letters (any script), digits, inner apostrophes/hyphens/periods ("O'Brien", "Jun-fan", "U.S").
_TOKEN = re.compile(r"[^\W_](?:[\w'’.\-]*[^\W_])?")
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b", re.IGNORECASE)
# Units a quantity is stated in: "three years" is not "three months" though both say three.
_UNITS = frozenset(
    """year years month months week weeks day days hour hours minute minutes rupee rupees dollar dollars euro
    euros pound pounds percent kilometre kilometres kilometer kilometers km mile miles metre metres meter meters
    acre acres ton tons tonne tonnes""".split()
)
_NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand lakh
    lakhs million crore crores billion and""".split()
)
_QUANTITY_TOKEN = re.compile(r"\d+(?:,\d+)*(?:\.\d+)?|[a-z]+")
# Where a new sentence or clause begins: the first word after one of these is capitalised by grammar.
_OPENING_MARKS = frozenset(".!?:;\"“”([—–")
_SKIPPED_BEFORE_WORD = frozenset(" *_`'’\n\t")


def _opens(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens the text, a sentence or a clause (emphasis and quotes skipped)."""
    index = start - 1
    while index >= 0 and text[index] in _SKIPPED_BEFORE_WORD:
        index -= 1
    return index < 0 or text[index] in _OPENING_MARKS
_YEAR_MIN, _YEAR_MAX = 1000, 2100


def _words(text: str) -> list[str]:
    """The text's words (``stages.text.normalise.words``), a possessive "'s" dropped ("Nevada's" -> "nevada")."""
    if "'" in text or "’" in text:
        text = _POSSESSIVE.sub("", text)
    return normalise.words(text)


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _words(text))


_META_STEMS = frozenset(stem(w) for w in META_WORDS)


_NUMBER_NAMES = _NUMBER_WORDS - {"and"}


def _may_have_number(text: str, words: list[str]) -> bool:
    """Cheap pre-test before the number parser: a digit or a number word."""
    return any(c.isdigit() for c in text) or not _NUMBER_NAMES.isdisjoint(words)


def _quantities(text: str, words: list[str]) -> frozenset[tuple[float, str]]:
    """(value, unit) for every number stated with a unit: "ten thousand rupees" -> (10000.0, "rupe")."""
    if _UNITS.isdisjoint(words):
        return frozenset()
    tokens = _QUANTITY_TOKEN.findall(text.lower().replace("-", " "))
    found: set[tuple[float, str]] = set()
    for index, token in enumerate(tokens):
        if token not in _UNITS:
            continue
        start = index
        while start > 0 and (tokens[start - 1][0].isdigit() or tokens[start - 1] in _NUMBER_WORDS):
            start -= 1
        if start == index - 1 and tokens[start][0].isdigit():  # the common case, "3 years", without the parser
            found.add((float(tokens[start].replace(",", "")), stem(token)))
        elif start < index:
            values = numbers_in(" ".join(tokens[start : index + 1]))
            if values:
                found.add((max(values), stem(token)))
    return frozenset(found)


def _content_pairs(words: list[str]) -> tuple[tuple[str, str], ...]:
    """Stems of adjacent word pairs where both are content words ("police officer", "primary law")."""
    return tuple(
        (stem(a), stem(b)) for a, b in zip(words, words[1:])
        if a not in CLAIM_STOPWORDS and b not in CLAIM_STOPWORDS and not a.isdigit() and not b.isdigit()
    )


@dataclass(frozen=True)
class ClaimDetails:
    """The specifics of one claim. ``entities`` are capitalised spans past the opening word ("Richard Nixon",
    "III"); ``dates`` are month names and years as written; ``numbers`` every other quantity;
    ``content`` the stems of the remaining content words."""

    entities: tuple[str, ...] = ()
    dates: tuple[str, ...] = ()
    numbers: frozenset[float] = frozenset()
    quantities: frozenset[tuple[float, str]] = frozenset()
    content: frozenset[str] = frozenset()
    content_pairs: tuple[tuple[str, str], ...] = ()
    modifiers: frozenset[str] = frozenset()
    """Stems of words that may qualify the next word: not shaped like a verb or a plural (-s, -ed, -ing)."""
    stated_numbers: frozenset[float] = frozenset()
    """Every number the text states, years included (``stages.text.units.numbers_in``), parsed once here."""


@dataclass(frozen=True)
class EvidenceTerms:
    """What a piece of evidence can support: every word stem (stopwords included), every quantity (with
    its unit where one is stated), and which content words it qualifies with another content word
    (``qualified``: ("police", "officer") for "police officer")."""

    stems: frozenset[str]
    numbers: frozenset[float]
    quantities: frozenset[tuple[float, str]] = frozenset()
    qualified: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class UnsupportedDetails:
    """The specifics of a claim that no evidence carries (empty tuples when all are supported)."""

    entities: tuple[str, ...] = ()
    dates: tuple[str, ...] = ()
    numbers: tuple[float, ...] = ()
    quantities: tuple[str, ...] = ()
    content: tuple[str, ...] = ()
    substituted: tuple[str, ...] = ()
    content_total: int = field(default=0, compare=False)
    """How many of the claim's content words were checked (those not presupposed)."""

    def __bool__(self) -> bool:
        return bool(self.entities or self.dates or self.numbers or self.quantities or self.content)


def _is_year(value: float) -> bool:
    return value.is_integer() and _YEAR_MIN <= value <= _YEAR_MAX


@lru_cache(maxsize=8192)
def claim_details(text: str) -> ClaimDetails:
    """The entities, dates, numbers and content words ``text`` asserts (citations ignored).

    A capitalised word opening a sentence or clause is an entity only when a capitalised word follows it
    ("Catherine Cortez Masto ...", not "Murder is ..."); otherwise it counts as a content word, so a lone
    invented name there is still caught by the content-word check.

    >>> d = claim_details("In October 1973, members of OAPEC proclaimed an oil embargo [OIL_0].")
    >>> d.entities, d.dates, sorted(d.content)
    (('OAPEC',), ('October', '1973'), ['embargo', 'member', 'oil', 'proclaim'])
    """
    plain = strip_citations(text)
    tokens = list(_TOKEN.finditer(plain))
    spans: list[list[str]] = []
    dates: list[str] = []
    previous_capital = False
    for index, match in enumerate(tokens):
        word = match.group(0)
        if not word[0].isupper():
            previous_capital = False
            continue
        word = word.rstrip(".")
        lower = word.lower()
        if lower in MONTHS:
            dates.append(word)
            previous_capital = False
            continue
        capital = lower not in _NOT_ENTITIES
        if capital and (previous_capital or (word.isupper() and len(word) > 1) or not _opens(plain, match.start())
                        or (index + 1 < len(tokens) and tokens[index + 1].group(0)[0].isupper())):
            if previous_capital and spans:
                spans[-1].append(word)
            else:
                spans.append([word])
            previous_capital = True
        else:
            previous_capital = False
    words = _words(plain)
    numbers = numbers_in(plain) if _may_have_number(plain, words) else frozenset()
    dates += [f"{n:g}" for n in sorted(numbers) if _is_year(n) and re.search(rf"\b{int(n)}\b", plain)]
    entity_stems = _stems(" ".join(w for span in spans for w in span)) | _stems(" ".join(dates))
    content = frozenset(
        stem(w) for w in words
        if w not in CLAIM_STOPWORDS and not w.isdigit() and w not in _NUMBER_WORDS  # numbers are checked as numbers
    ) - entity_stems - _META_STEMS
    return ClaimDetails(
        entities=tuple(" ".join(span) for span in spans),
        dates=tuple(dict.fromkeys(dates)),
        numbers=frozenset(n for n in numbers if not _is_year(n)),
        quantities=_quantities(plain, words) if numbers else frozenset(),
        content=content,
        content_pairs=tuple(pair for pair in _content_pairs(words) if pair[0] in content or pair[1] in content),
        modifiers=frozenset(stem(w) for w in words if len(w) > 3 and not w.endswith(("s", "ed", "ing"))),
        stated_numbers=numbers,
    )


@lru_cache(maxsize=4096)
def evidence_terms(text: str, numbers: frozenset[float] | None = None) -> EvidenceTerms:
    """The stems and quantities of evidence text (brackets in a document read as text). ``numbers``: the
    text's quantities when the caller has already parsed them (``stages.text.units.evidence_numbers``).

    >>> sorted(evidence_terms("Nevada's Attorney General (2007-2015)").numbers)
    [2007.0, 2015.0]
    """
    plain = text.replace("[", "(").replace("]", ")")
    words = _words(plain)
    if numbers is None:
        numbers = numbers_in(plain) if _may_have_number(plain, words) else frozenset()
    return EvidenceTerms(stems=frozenset(stem(w) for w in words), numbers=numbers,
                         quantities=_quantities(plain, words) if numbers else frozenset(),
                         qualified=frozenset(_content_pairs(words)))


def unsupported_details(
    claim: ClaimDetails,
    evidence: Iterable[EvidenceTerms],
    *,
    presupposed: frozenset[str] = frozenset(),
    presupposed_numbers: frozenset[float] = frozenset(),
) -> UnsupportedDetails:
    """The claim's specifics that none of ``evidence`` carries. An entity is supported when each of its
    words is (so "King Charles IV" fails against "King Charles III"); a date or number by value; a content
    word by stem, or when it is among ``presupposed`` stems (e.g. the question's own words: restating what
    was asked asserts nothing new); a year or number likewise when it is among ``presupposed_numbers`` (the
    question's own: "the 1949 film" restated from the question). A quantity with a unit needs that unit when the evidence states the
    value with another ("three years" against "three months"). An unsupported content word is
    ``substituted`` when it qualifies a supported word that the evidence qualifies with a word of its own
    ("military officer" against "police officer"); words shaped like verbs or plurals are not taken for
    qualifiers ("defines employer"), nor is a word taken to replace one that starts like it ("swore fealty"
    against "swear fealty").

    >>> ev = (evidence_terms("Catherine Cortez Masto was Attorney General of Nevada."),)
    >>> unsupported_details(claim_details("Catherine Cortez Masto served as Attorney General of California."), ev).entities
    ('California',)
    """
    evidence = tuple(evidence)
    if len(evidence) == 1:  # the common case: no unions to build
        stems, numbers, quantities = evidence[0].stems, evidence[0].numbers, evidence[0].quantities
    else:
        stems = frozenset().union(*(t.stems for t in evidence))
        numbers = frozenset().union(*(t.numbers for t in evidence))
        quantities = frozenset().union(*(t.quantities for t in evidence))
    if presupposed_numbers:
        numbers = numbers | presupposed_numbers
    missing_parts = tuple(dict.fromkeys(
        part for entity in claim.entities for part in entity.split()
        if any(s not in stems and s not in presupposed for s in _stems(part) if s not in CLAIM_STOPWORDS)
    ))
    dates = tuple(
        d for d in claim.dates
        if (float(d) not in numbers if d.isdigit() else stem(d.lower()) not in stems | presupposed)
    )
    wrong_units: tuple[str, ...] = ()
    if claim.quantities:
        valued = {value for value, _ in quantities}
        wrong_units = tuple(
            f"{value:g} {unit}" for value, unit in sorted(claim.quantities)
            if (value, unit) not in quantities and value in valued
        )
    checked = [w for w in claim.content if w not in presupposed]
    content = tuple(sorted(w for w in checked if w not in stems))
    candidates = [(left, right) for left, right in claim.content_pairs
                  if left in content and left in claim.modifiers and right in stems]
    substituted: tuple[str, ...] = ()
    if candidates:
        qualifiers: dict[str, set[str]] = {}
        for terms in evidence:
            for qualifier, head in terms.qualified:
                qualifiers.setdefault(head, set()).add(qualifier)
        # another form of the same word ("swore" for "swear") is not a substitution
        substituted = tuple(sorted({left for left, right in candidates
                                    if any(q[:2] != left[:2] for q in qualifiers.get(right, ()))}))
    return UnsupportedDetails(
        entities=missing_parts,
        dates=dates,
        numbers=tuple(sorted(n for n in claim.numbers if n not in numbers)),
        quantities=wrong_units,
        content=content,
        substituted=substituted,
        content_total=len(checked),
    )
