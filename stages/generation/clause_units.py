"""Quotable units of a chunk: sentences, and the clauses of a statute's long sentences.

Sentences are cut at enumerations ("(a)", "(ii)", "(1)") that open a clause, at ";" and ";—", at heading
dashes ("Definitions.—In this Act") and at "Explanation"/"Illustration" labels (labels are not quoted).
Clauses continued by "; and includes ..." or "; or ..." stay with the clause they continue. Every unit's text
is a substring of the whitespace-normalised chunk text, so a quoted unit is verbatim evidence.

>>> [u.text for u in clause_units('2. Definitions.—In this Act,— (a) "wage" means pay; and includes tips; (b) "day" means a day.')]
['Definitions.', 'In this Act,', '"wage" means pay; and includes tips', '"day" means a day.']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from stages.text.normalise import CLAIM_STOPWORDS
from stages.text.units import split_sentences

__all__ = ["ClauseUnit", "UnitKind", "clause_units"]

UnitKind = Literal["provision", "explanation", "illustration"]

_ENUM = r"\(\s*(?:[a-z]{1,2}|[ivxlc]{1,6}|\d{1,3}|[A-Z])\s*\)"
# Where a sentence is cut: a heading dash before a capital, quote or "(" ("Definitions.—In this Act",
# "requires,— (a)"); ";" and ";—"; ":" before an enumerator; "," before an enumerated definition
# (', (e) "employer" means'); before a dashed Explanation/Illustration label inside a sentence.
_CUT = re.compile(
    r"\s*[—–]+\s*(?=[A-Z\"“'‘(])"
    r"|\s*;[—–]*\s*"
    rf"|:\s*(?={_ENUM})"
    rf"|,\s*(?={_ENUM}\s*[\"“'‘])"
    r"|\s+(?=(?:Explanation|Illustration)s?\b\s*\d*\s*[.:]?\s*[—–])"
)
# Labels are structure, not content: "(c)", "(f)}" (an OCR'd bracket), "Illustration", "Explanation 2.—".
_LEADING_ENUM = re.compile(rf"^{_ENUM}[}}\]|]?\s*")
_LEADING_LABEL = re.compile(r"^(Explanation|Illustration)s?\b\s*\d*\s*[.:]?\s*[—–]*\s*")
_CONTINUATION = re.compile(r"^(?:and|or|but|nor)\b")
_SECTION_HEADING = re.compile(r"^\d+[A-Z]{0,2}\.$")
_CHUNK_END_COMPLETE = re.compile(r"[.!?;:)\"”’]\s*$")


@dataclass(frozen=True)
class ClauseUnit:
    """One quotable unit of a chunk: a sentence or a clause of one, verbatim (whitespace normalised)."""

    text: str
    kind: UnitKind = "provision"
    fragment: bool = False
    """Cut off by the chunk's start or end (the chunk begins or ends mid-sentence), or a lead-in without items."""
    heading: bool = False
    """A section's title before its heading dash ("Punishment for cheating.—")."""
    lead_in_only: bool = False
    """A fragment only because it is a lead-in whose items follow as sentences of their own ("... is designated
    an “unlawful assembly”, if the common object ... is—"): complete text, an unfinished thought."""


def _ends_mid_sentence(text: str) -> bool:
    stripped = text.rstrip()
    if not stripped or _CHUNK_END_COMPLETE.search(stripped):
        return False
    last = re.findall(r"[A-Za-z]+", stripped[-30:])
    return stripped.endswith((",", "—", "–", "-")) or (bool(last) and last[-1].lower() in CLAIM_STOPWORDS)


@dataclass
class _Span:
    start: int
    end: int
    kind: UnitKind
    fragment: bool
    heading: bool


def _pieces(sentence: str) -> list[tuple[int, int, str, str]]:
    """(start, end, cut before, cut after) of the spans of ``sentence`` between cuts."""
    cuts = [(m.start(), m.end(), m.group(0)) for m in _CUT.finditer(sentence)]
    bounds = [(0, 0, ""), *cuts, (len(sentence), len(sentence), "")]
    spans: list[tuple[int, int, str, str]] = []
    for (_, start, before), (end, _, after) in zip(bounds, bounds[1:]):
        if end > start:
            spans.append((start, end, before, after))
    return spans


def clause_units(text: str) -> list[ClauseUnit]:
    """The units of a chunk's text, in order: sentences cut into clauses (see the module docstring).
    Every unit's text is a substring of the whitespace-normalised ``text``.

    >>> [(u.text, u.kind) for u in clause_units("Whoever cheats shall be punished. Illustration A cheats Z.")]
    [('Whoever cheats shall be punished.', 'provision'), ('A cheats Z.', 'illustration')]
    >>> [u.text for u in clause_units("Theft.—One is said to steal who,— (a) takes; or (b) keeps. (2) Fine.")]
    ['Theft.', 'One is said to steal who,— (a) takes; or (b) keeps.', 'Fine.']
    """
    units: list[ClauseUnit] = []
    kind: UnitKind = "provision"
    starts_mid_sentence = text.lstrip()[:1].islower()
    ends_mid_sentence = _ends_mid_sentence(text)
    sentences = split_sentences(text)
    for s_index, sentence in enumerate(sentences):
        if _SECTION_HEADING.match(sentence):
            kind = "provision"  # a new section begins; its number alone is no unit
            continue
        spans = _pieces(sentence)
        merged: list[_Span] = []
        for p_index, (start, end, before, after) in enumerate(spans):
            piece = sentence[start:end]
            label = _LEADING_LABEL.match(piece)
            enum = None if label else _LEADING_ENUM.match(piece)
            if label:
                kind = "illustration" if label.group(1) == "Illustration" else "explanation"
                start += label.end()
            elif enum:
                start += enum.end()
            if start >= end:
                continue
            is_last = s_index == len(sentences) - 1 and p_index == len(spans) - 1
            truncated = is_last and ends_mid_sentence
            fragment = truncated or (s_index == 0 and p_index == 0 and starts_mid_sentence)
            body = sentence[start:end]
            # "; and includes ...", "; or ...", and items that go on the lead-in's sentence ("who,— (a) takes")
            # belong to the clause they continue; items that start afresh ('(b) "employee" means') do not.
            continues = (";" in before and bool(_CONTINUATION.match(body))) or (enum is not None and body[:1].islower())
            if continues and merged and not truncated:
                if enum is not None:
                    start -= enum.end()
                merged[-1].end = end
                continue
            heading = p_index == 0 and len(spans) > 1 and bool(re.search("[—–]", after)) and not piece.rstrip().endswith((",", ":"))
            merged.append(_Span(start, end, kind, fragment or continues, heading))
        for span in merged:
            unit_text = sentence[span.start : span.end].strip()
            if unit_text:
                # A lead-in whose items are not here ("who, by deceiving another person,—") says nothing.
                lead_in = unit_text.endswith((",", ":", "—", "–"))
                units.append(ClauseUnit(unit_text, span.kind, span.fragment or lead_in, span.heading,
                                        lead_in and not span.fragment))
    return units
