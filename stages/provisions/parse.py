"""A code's sections read from its text: ``(section, title, text)`` triples in the code's order.

Two sources: an Act's text as its PDF yields it, where a section opens a line with its number and its heading,
ended by a full stop and a dash ("303. Theft.—(1) Whoever ..."); and the civictech JSON of the Indian Acts (one
record a section). The arrangement of sections at the front of an Act has no dash after its headings, so it is
never read as sections; numbers only go forward, so a sub-section or a page number is never a section either.

>>> [s[:2] for s in sections_from_text("1. Short title.—This Act.\\n7\\n2. Definitions.—In this Act.")]
[('1', 'Short title'), ('2', 'Definitions')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

__all__ = ["STAGE_VERSION", "Section", "sections_from_text", "sections_from_records", "sections_from_bytes", "subsections",
           "commencement_date"]

STAGE_VERSION = "provisions.v1"

Section = tuple[str, str, str]  # (number as printed, heading, flattened text)

# A heading: number (+ letters, "498A"), a full stop (once misprinted ".—"), up to four lines of heading, a full stop and a dash.
_HEADING = re.compile(r"(?m)^[ \t]*(\d{1,3})([A-Z]{0,2})\.(?:[ \t]+|[ \t]*[—–][ \t]*)([^\n—–]{1,200}(?:\n[^\n—–\d(][^\n—–]{0,200}){0,3}?)"
                      r"\.?[ \t]*[—–]")
_PAGE_NUMBER = re.compile(r"(?m)^[ \t]*\d{1,4}[ \t]*\n")
_SPACE = re.compile(r"\s+")
# A sub-section marker "(2) " that opens a sentence (not "sub-section (2) of section 5").
_SUBSECTION = re.compile(r"(?:(?<=^)|(?<=[.:;—–]))\s*(?=\(\d{1,2}\)\s)")
# How far numbering may jump between two sections read (a repealed run leaves a gap; a page number leaps).
_MAX_GAP = 30


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def sections_from_text(text: str) -> list[Section]:
    """Every section of an Act's text whose number follows the last one read, with its heading and its text."""
    text = _PAGE_NUMBER.sub("", text.replace("\r", ""))
    heads: list[tuple[int, int, str, str]] = []  # (start, body start, number, title)
    last, last_suffix = 0, ""
    for m in _HEADING.finditer(text):
        number, suffix, title = int(m.group(1)), m.group(2), _flat(m.group(3)).rstrip(". ")
        forward = last < number <= last + _MAX_GAP
        lettered = number == last and suffix > last_suffix
        if not title or not (forward or lettered):
            continue
        last, last_suffix = number, suffix
        heads.append((m.start(), m.end(), f"{number}{suffix}", title))
    out = []
    for k, (_, body, section, title) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(text)
        out.append((section, title, _flat(text[body:end])))
    return out


def sections_from_records(records: Iterable[Mapping[str, object]]) -> list[Section]:
    """The civictech JSON records of one Act (``Section``, ``section_title``, ``section_desc``) as sections."""
    out = []
    for record in records:
        section = _flat(str(record.get("Section", "")))
        title = _flat(str(record.get("section_title", ""))).rstrip(" -")
        text = _flat(str(record.get("section_desc", "")))
        if section and (text or title):  # a record without its text (IPC 304B) still names its section
            out.append((section, title, text))
    return out


def subsections(text: str) -> list[str]:
    """A section's text cut at its sub-section markers ("(1) ...", "(2) ..."); the whole text when it has none.

    >>> subsections("(1) Whoever steals. (2) Whoever commits theft shall be punished under sub-section (1) here.")
    ['(1) Whoever steals.', '(2) Whoever commits theft shall be punished under sub-section (1) here.']
    """
    parts = [p.strip() for p in _SUBSECTION.split(text) if p.strip()]
    return parts or [text]


def sections_from_bytes(data: bytes, media_type: str) -> list[Section]:
    """The sections of a source file's bytes: a PDF's text layer, a JSON list of section records, or plain text.

    Raises ``ValueError`` naming what is wrong when the bytes are not such a source (or hold no section)."""
    if media_type == "application/pdf":
        import pymupdf

        try:
            with pymupdf.open(stream=data, filetype="pdf") as doc:
                text = "\n".join(page.get_text() for page in doc)
        except Exception as exc:  # noqa: BLE001 - pymupdf raises its own types for a damaged file
            raise ValueError(f"not a readable PDF ({type(exc).__name__})") from exc
        found = sections_from_text(text)
    elif media_type == "application/json":
        try:
            records = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not JSON ({exc})") from exc
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise ValueError("the JSON is not a list of section records")
        found = sections_from_records(records)
    else:
        found = sections_from_text(data.decode("utf-8", errors="replace"))
    if not found:
        raise ValueError("no numbered sections found (a section reads '12. Heading.—Text')")
    return found


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_DATE = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+day\s+of\s+(" + "|".join(_MONTHS) + r"),?\s+(\d{4})", re.IGNORECASE)
_IN_FORCE = re.compile(r"come\s+into\s+force\s+(?:on\s+)?(?:such\s+date\s*(\d)?)?", re.IGNORECASE)
# How many of a code's first sections are read for its commencement (its short title and definitions).
_HEAD_SECTIONS = 3


def commencement_date(sections: list[Section]) -> str | None:
    """The date a code came into force, as ISO ``YYYY-MM-DD``, from its own text: the date its commencement
    clause names ("shall come into force on the 1st day of July, 2024"), or, when the clause leaves the date to a
    notification ("on such date¹ as the Central Government may ... appoint"), the footnote it points to ("1. 1st
    day of July, 2024, ..."), which a PDF's text carries among its first sections. None when neither is there.

    >>> commencement_date([("1", "Short title and commencement", "(2) It shall come into force on such date1 as the "
    ...                     "Government may appoint."), ("2", "Definitions", "(1) act ... 1. 1st day of July, 2024, vide")])
    '2024-07-01'
    >>> commencement_date([("1", "Short title", "This Act extends to the whole of India.")]) is None
    True
    """
    head = " ".join(x for _, _, x in sections[:_HEAD_SECTIONS])
    clause = _IN_FORCE.search(head)
    if clause is None:
        return None
    marker = clause.group(1)
    if marker is None:  # the clause names its date
        found = _DATE.search(head[clause.end():clause.end() + 80])
    else:  # the footnote the clause's marker points to: "<marker>. <date>"
        found = re.compile(rf"(?<![\d(]){marker}\.\s+{_DATE.pattern}", re.IGNORECASE).search(head)
    if found is None:
        return None
    day, month, year = found.groups()
    return f"{int(year):04d}-{_MONTHS.index(month.lower()) + 1:02d}-{int(day):02d}"
