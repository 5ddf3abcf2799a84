"""Claim-support pairs made by rule from statute sentences, the way FactCC was trained.

Every rule takes one sentence of a provision and returns a claim with a label against that provision's text:

* **faithful** (label 1): the sentence restated as answers restate law ("shall be punished with imprisonment
  ... which may extend to three years" -> "is punishable with imprisonment ... of up to three years"; "Whoever
  commits X" -> "A person who commits X"). Only wording the law's meaning does not hang on is changed.
* **meaning-changing** (label 0), keeping the section's own words: a negation inserted or removed, "or" made
  "and" (and back), "may extend to" made "shall not be less than" (and back), a number or a unit of time changed,
  two parties swapped, a qualifier of intent dropped ("dishonestly", "voluntarily", "knowingly" ...).

The word checks accept almost all of the second kind (the words are the section's own): this is what a trained
reader has to learn. Each rule is deterministic; ``claim_variants`` returns every rule that applies to a sentence.

>>> [(v.rule, v.label, v.claim) for v in claim_variants("Whoever commits theft shall be punished with "
...  "imprisonment for a term which may extend to three years, or with fine.")][:3]  # doctest: +NORMALIZE_WHITESPACE
[('restate', 1, 'A person who commits theft is punishable with imprisonment for a term of up to three years, or
  with fine.'), ('or_and', 0, 'Whoever commits theft shall be punished with imprisonment for a term which may extend
  to three years, and with fine.'), ('extend_minimum', 0, 'Whoever commits theft shall be punished with imprisonment
  for a term which shall not be less than three years, or with fine.')]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ClaimVariant", "claim_variants", "RULES"]


@dataclass(frozen=True)
class ClaimVariant:
    rule: str
    label: int
    claim: str


_NUMBERS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "fourteen", "twenty")
_NUMBER = re.compile(r"\b(" + "|".join(_NUMBERS) + r")\b")
_NEXT_NUMBER = {w: _NUMBERS[(i + 3) % len(_NUMBERS)] for i, w in enumerate(_NUMBERS)}
_DIGITS = re.compile(r"(?<![\w.])(\d{1,6})(?![\w.])")
_UNITS = {"years": "months", "year": "month", "months": "years", "month": "year", "days": "years", "day": "year"}
_UNIT = re.compile(r"\b(" + "|".join(_UNITS) + r")\b")
_QUALIFIERS = re.compile(r"\b(dishonestly|fraudulently|voluntarily|intentionally|knowingly|wilfully|negligently|"
                         r"rashly|maliciously|deliberately)\s+(?:or\s+\w+ly\s+)?")
_PARTIES = (("husband", "wife"), ("employer", "employee"), ("master", "servant"), ("owner", "tenant"),
            ("buyer", "seller"), ("landlord", "tenant"), ("principal", "agent"), ("woman", "man"))
_LETTER_PARTIES = re.compile(r"\b([AZ])\b")


def _once(pattern: str | re.Pattern[str], repl: str | Callable[[re.Match[str]], str], text: str) -> str | None:
    out, n = re.subn(pattern, repl, text, count=1)
    return out if n and out != text else None


def restate(s: str) -> str | None:
    out = s
    out = re.sub(r"\bshall be punished with\b", "is punishable with", out)
    out = re.sub(r"\bwhich may extend to\b", "of up to", out)
    out = re.sub(r"^Whoever\b", "A person who", out)
    out = re.sub(r"\bis said to commit\b", "commits", out)
    out = re.sub(r"\bshall also be liable to fine\b", "is also liable to a fine", out)
    return out if out != s else None


def or_and(s: str) -> str | None:
    return _once(r"\bor\b", "and", s) if " or " in s else None


def and_or(s: str) -> str | None:
    return _once(r"\band\b", "or", s) if " and " in s and " or " not in s else None


def extend_minimum(s: str) -> str | None:
    return _once(r"\bmay extend to\b", "shall not be less than", s)


def minimum_extend(s: str) -> str | None:
    return _once(r"\bshall not be less than\b", "may extend to", s)


def negation(s: str) -> str | None:
    removed = (_once(r"\bshall not\b", "shall", s) or _once(r"\bis not\b", "is", s)
               or _once(r"\bwithout\b", "with", s) or _once(r"^Nothing is an offence\b", "Everything is an offence", s))
    if removed:
        return removed
    return _once(r"\b(shall|is|may)\b(?! not)", lambda m: f"{m.group(1)} not", s)


def number(s: str) -> str | None:
    return (_once(_NUMBER, lambda m: _NEXT_NUMBER[m.group(1)], s)
            or _once(_DIGITS, lambda m: str(int(m.group(1)) * 10 if int(m.group(1)) < 100 else int(m.group(1)) // 10), s))


def unit(s: str) -> str | None:
    return _once(_UNIT, lambda m: _UNITS[m.group(1)], s)


def parties(s: str) -> str | None:
    for one, two in _PARTIES:
        if re.search(rf"\b{one}\b", s) and re.search(rf"\b{two}\b", s):
            return re.sub(rf"\b({one}|{two})\b", lambda m: two if m.group(1) == one else one, s)
    if len(set(_LETTER_PARTIES.findall(s))) == 2:
        return _LETTER_PARTIES.sub(lambda m: "Z" if m.group(1) == "A" else "A", s)
    return None


def qualifier(s: str) -> str | None:
    return _once(_QUALIFIERS, "", s)


RULES: tuple[tuple[str, int, Callable[[str], str | None]], ...] = (
    ("restate", 1, restate),
    ("or_and", 0, or_and),
    ("extend_minimum", 0, extend_minimum),
    ("minimum_extend", 0, minimum_extend),
    ("and_or", 0, and_or),
    ("negation", 0, negation),
    ("number", 0, number),
    ("unit", 0, unit),
    ("parties", 0, parties),
    ("qualifier", 0, qualifier),
)


def claim_variants(sentence: str) -> list[ClaimVariant]:
    """Every rule that applies to ``sentence``, in ``RULES`` order; a sentence under 6 words gives none."""
    sentence = " ".join(sentence.split())
    if len(sentence.split()) < 6:
        return []
    out = []
    for name, label, rule in RULES:
        claim = rule(sentence)
        if claim and claim != sentence:
            out.append(ClaimVariant(name, label, claim))
    return out
