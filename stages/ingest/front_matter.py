"""Front matter: an arrangement of sections, a table of contents, an index, a list of figures. It names what a
document holds and answers nothing, so it is never evidence (issue 38: the BNS's arrangement of sections was cited
as the answer to a theft question, "THE BHARATIYA NYAYA SANHITA, 2023 ARRANGEMENT OF SECTIONS...").

``find_front_matter(text)`` finds each listing in cleaned text: a title line (``ARRANGEMENT OF SECTIONS``,
``CONTENTS``, ``INDEX``, ``LIST OF FIGURES``...) and the listing lines around it, before and after:

* entries: numbered lines without the statute dash (``25. Act not intended ... by consent.``), decimal and roman
  numbered lines, lines ending in a page number (``1.1 Introduction ..... 3``), index lines (``Acid rain, 45, 67``);
* headings inside the listing (``CHAPTER IV``, ``SECTIONS``, ``Of right of private defence``), short title-case
  lines (an unnumbered contents box: ``Goals of Psychological Enquiry``), and the wrapped tail of an entry.

The listing stops at the first other line (prose, a statute section with its dash), and is trimmed to its last
entry or title-case line; it counts when it holds at least ``MIN_ENTRIES`` entries or title-case lines. Each
becomes a ``Section`` of level ``front_matter`` (id from its title: ``ArrangementOfSections``, ``Contents``), so
the chunker keeps it apart from the text around it and flags its chunks ``front_matter``
(``FRONT_MATTER_FLAG``): retrieval skips them and the context pack never holds one.
``with_regions(sections, regions)`` lays such regions (and ``stages.ingest.exercises``' blocks) over the recovered
sections (a heading inside a listing is the listing's; a section running into one ends where it starts);
``disjoint(first, then)`` keeps the regions of ``then`` that do not overlap one of ``first``.

>>> text = "CONTENTS\\n1.1 Introduction 1\\n1.2 Acids 3\\n1.3 Bases 7\\n1.1 Introduction\\nAcids taste sour and turn blue litmus red."
>>> [(s.section_id, s.level, text[s.char_start:s.char_end].splitlines()[-1]) for s in find_front_matter(text)]
[('Contents', 'front_matter', '1.3 Bases 7')]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from contracts.ingest import Section

__all__ = ["FRONT_MATTER_FLAG", "MIN_ENTRIES", "find_front_matter", "with_regions", "disjoint"]

FRONT_MATTER_FLAG = "front_matter"
MIN_ENTRIES = 3

_TITLE = re.compile(
    r"^\s*(?:(?:the\s+)?arrangement\s+of\s+(?:sections|clauses|articles|rules|regulations|chapters)"
    r"|(?:table\s+of\s+)?contents|index|subject\s+index|glossary\s+index"
    r"|list\s+of\s+(?:figures|tables|illustrations|maps|plates|abbreviations(?:\s+used)?|boxes|activities))"
    r"\s*:?\s*$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^\s*(?:\d{1,3}[A-Z]{0,3}[.)]|\d{1,2}(?:\.\d{1,2})+\.?|[IVXLC]{1,6}[.)])\s+\S")
_STATUTE_DASH = re.compile(r"^\s*(?:\d{1,3}\s?\[)?\d{1,3}[A-Z]{0,3}\.\s+[^\n]{0,240}?(?:\.\s?[—–]|—|\.\s?-{1,2}\s?[A-Z(])")
# Page numbers have at most three digits: "ACT NO. 45 OF 2023" and "SANHITA, 2023" end in years.
_PAGE_NUMBER_END = re.compile(r"\S(?:\s*\.{2,}\s*|\s+)\d{1,3}\s*$")
_INDEX_ENTRY = re.compile(r"\S,\s*\d{1,3}(?:\s*[-–]\s*\d{1,3})?(?:\s*,\s*\d{1,3}(?:\s*[-–]\s*\d{1,3})?)*\s*$")
_LISTING_HEADING = re.compile(
    r"^\s*(?:(?:CHAPTER|PART|UNIT|SCHEDULE|Chapter|Part|Unit)\s+[\dIVXLC]+[A-Z]?\b.*|SECTIONS?|CLAUSES|ARTICLES|PAGES?"
    r"|Page|Sections?)\s*$"
)
_MAX_LISTING_WORDS = 8
_CONNECTORS = frozenset("a an and as at by for from in of on or the to with".split())


def _words(line: str) -> list[str]:
    return line.split()


def _is_entry(line: str) -> bool:
    """A listed item: numbered without the statute dash, or ending in page numbers."""
    stripped = line.strip()
    if not stripped or len(stripped) > 220:
        return False
    if _STATUTE_DASH.match(stripped):
        return False  # "303. Theft.—Whoever..." is the Act itself
    if _NUMBERED.match(stripped):
        return len(_words(stripped)) <= 30
    return bool(len(_words(stripped)) <= 14 and (_PAGE_NUMBER_END.search(stripped) or _INDEX_ENTRY.search(stripped)))


def _is_title_case(line: str) -> bool:
    """A short title-case line without closing punctuation: ``Goals of Psychological Enquiry``."""
    words = _words(line)
    if not words or len(words) > _MAX_LISTING_WORDS or line.rstrip()[-1:] in ".?!:;,":
        return False
    if not words[0][:1].isupper():
        return False
    long_words = [w for w in words if len(w) >= 4 and w[:1].isalpha()]
    return sum(w[:1].isupper() for w in long_words) * 2 >= len(long_words)


def _is_heading(line: str) -> bool:
    stripped = line.strip()
    if _LISTING_HEADING.match(stripped):
        return True
    # "Of right of private defence", "PRELIMINARY": a short line without closing punctuation; a statute's group
    # heading "Of causing miscarriage, etc.".
    words = _words(stripped)
    if 1 < len(words) <= 10 and words[0] in ("Of", "OF"):
        return True
    if stripped.isupper() and len(words) <= 14:
        return True  # a chapter's title in capitals
    return 0 < len(words) <= _MAX_LISTING_WORDS and stripped[-1] not in ".?!;,"


def _is_continuation(line: str, entry: str) -> bool:
    """The wrapped tail of ``entry``: not long, and starting in lower case, or one or two words, or following an
    entry cut at a comma or a connecting word ("...counterfeiting coin," / "Government stamp, currency-notes or bank-notes.")."""
    stripped = line.strip()
    words = _words(stripped)
    last = entry.split()[-1] if entry.split() else ""
    cut = last.endswith(",") or last.lower() in _CONNECTORS
    return 0 < len(words) <= 16 and (stripped[0].islower() or len(words) <= 2 or cut)


def _line_offsets(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _kind(line: str, entry: str | None) -> str:
    """``entry``, ``title_case``, ``heading``, ``continuation``, ``blank`` or ``other``."""
    if not line.strip():
        return "blank"
    if _is_entry(line):
        return "entry"
    if _is_title_case(line):
        return "title_case"
    if _is_heading(line):
        return "heading"
    if entry is not None and _is_continuation(line, entry):
        return "continuation"
    return "other"


def _extent(lines: list[str], title: int, step: int) -> tuple[int, int]:
    """From the title line, the last line of the listing in direction ``step`` (+1 forward, -1 backward) that is an
    entry or a title-case line, and how many of those it passed."""
    listed: list[int] = []  # entry and title-case lines passed
    previous, entry = title, None  # the last line that was not blank; the entry it was part of
    i = title + step
    while 0 <= i < len(lines):
        kind = _kind(lines[i], entry if step > 0 else None)
        if kind == "other" and step > 0 and entry is not None and _next_is_entry(lines, i):
            kind = "continuation"  # one odd line between two entries: the tail of a wrapped entry
        if kind == "other" or (step < 0 and kind == "continuation"):
            # Forward, a listed line right before prose is the body's first heading ("1.1 Introduction"), unless it
            # ends in a page number (before a statute's first section, "3. Theft.—", it is the last entry).
            if step > 0 and kind == "other" and listed and listed[-1] == previous and not _STATUTE_DASH.match(lines[i]):
                if not (_PAGE_NUMBER_END.search(lines[previous]) or _INDEX_ENTRY.search(lines[previous])):
                    listed.pop()
            break
        if _TITLE.match(lines[i]):
            break  # the next listing's own title
        if kind in ("entry", "title_case"):
            listed.append(i)
        if kind != "blank":
            entry = lines[i] if kind in ("entry", "continuation") else None
            previous = i
        i += step
    return (listed[-1] if listed else title), len(listed)


def _next_is_entry(lines: list[str], i: int) -> bool:
    following = next((line for line in lines[i + 1 : i + 4] if line.strip()), None)
    return following is not None and _kind(following, None) == "entry"


def _section_id(title: str) -> str:
    words = re.findall(r"[A-Za-z]+", title)
    return "".join(w[:1].upper() + w[1:].lower() for w in words)[:40] or "FrontMatter"


def find_front_matter(text: str) -> tuple[Section, ...]:
    """The listings in a cleaned text, in text order, as ``front_matter`` sections (see the module docstring)."""
    lines = text.split("\n")
    offsets = _line_offsets(text)
    found: list[tuple[int, int, str]] = []
    for i, line in enumerate(lines):
        if not _TITLE.match(line):
            continue
        if found and offsets[i][0] < found[-1][1]:
            continue
        first, before = _extent(lines, i, -1)
        last, after = _extent(lines, i, +1)
        if before + after < MIN_ENTRIES:
            continue
        start = offsets[first][0] + (len(lines[first]) - len(lines[first].lstrip()))
        found.append((start, offsets[last][1], line.strip()))
    seen: Counter[str] = Counter()
    sections: list[Section] = []
    for start, end, title in found:
        base = _section_id(title)
        seen[base] += 1
        sections.append(Section(section_id=base if seen[base] == 1 else f"{base}#{seen[base]}", title=title,
                                level="front_matter", char_start=start, char_end=end))
    return tuple(sections)


def with_regions(sections: Sequence[Section], regions: Sequence[Section]) -> tuple[Section, ...]:
    """The recovered sections with regions (front matter, exercises) laid over them: a section starting inside a region is
    dropped (its heading is a listed entry), one running into a region ends where the region starts, ids are made
    unique again among the sections kept; regions and sections in text order.

    >>> a = Section(section_id="1", char_start=0, char_end=50)
    >>> inside = Section(section_id="1.1", level="heading", char_start=20, char_end=30)
    >>> toc = Section(section_id="Contents", level="front_matter", char_start=10, char_end=40)
    >>> [(s.section_id, s.char_start, s.char_end) for s in with_regions([a, inside], [toc])]
    [('1', 0, 10), ('Contents', 10, 40)]
    """
    if not regions:
        return tuple(sections)
    kept: list[Section] = []
    seen: Counter[str] = Counter()
    for section in sections:
        if any(r.char_start <= section.char_start < r.char_end for r in regions):
            continue
        end = min([section.char_end, *(r.char_start for r in regions if r.char_start > section.char_start)])
        if end <= section.char_start:
            continue
        # Ids are made unique again among what is kept: a listed "1.1" no longer makes the text's "1.1" "1.1#2".
        base = section.section_id.split("#", 1)[0]
        seen[base] += 1
        update = {"char_end": end, "section_id": base if seen[base] == 1 else f"{base}#{seen[base]}"}
        kept.append(section.model_copy(update=update))
    return tuple(sorted([*kept, *regions], key=lambda s: s.char_start))


def disjoint(first: Sequence[Section], then: Sequence[Section]) -> tuple[Section, ...]:
    """``first`` and those regions of ``then`` that overlap none of ``first``, in text order ("Review Questions"
    listed in a contents box is the listing's, not an exercise set).

    >>> toc = Section(section_id="Contents", level="front_matter", char_start=0, char_end=40)
    >>> ex = Section(section_id="ReviewQuestions", level="exercise", char_start=30, char_end=60)
    >>> [s.section_id for s in disjoint([toc], [ex])]
    ['Contents']
    """
    kept = [r for r in then if not any(r.char_start < f.char_end and f.char_start < r.char_end for f in first)]
    return tuple(sorted([*first, *kept], key=lambda s: s.char_start))
