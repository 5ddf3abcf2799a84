"""Structure recovery: statute sections, articles, chapters, parts and textbook headings in cleaned text.

``find_sections`` returns flat, non-overlapping segments in text order. Each segment runs from its
heading to the next heading of any level (so sub-sections, Explanations, Illustrations and provisos
stay inside their section); text before the first heading belongs to no section.

Heading forms recognised (each a line of its own, or starting a line):

* statute sections, India Code style: ``420. Cheating and dishonestly inducing delivery of property.—Whoever``
  (an amendment marker such as ``1[4. Penalty for demanding dowry.—`` is allowed; the title may wrap onto
  one more line; the dash after the title is required, which keeps tables of contents and footnotes out);
* ``Section 2. Definitions`` / ``Section 2:`` with the title on the next line / ``SECTION 2 — Definitions``;
* ``Article 21A. Right to education`` (constitution articles);
* ``CHAPTER XVII`` (title on the same or the next line), ``PART III``;
* numbered textbook headings ``5.1 Introduction``, ``5.3 nth Term of an AP`` and ``EXERCISE 5.1``;
* Markdown headings ``## Something``.

False-positive guards: section numbers have at most three digits (so a line starting ``1950.`` is not a
section), every title must contain a capitalised word, numbered list items without the statute dash are
ignored, a ``Section N`` mention followed by running prose (``Section 23 shall be renumbered``) is ignored,
and when a document mixes section styles only the most frequent one is used (an amendment quoting another
style inside a section stays inside it). Section ids are made unique inside a document: a repeated id
(an Act and its Rules both having ``2.``) gets ``#2``, ``#3``... in order of appearance.

>>> [s.section_id for s in find_sections("Preamble.\\n1. Short title.—This Act.\\n2. Definitions.—In this Act.")]
['1', '2']
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from contracts.ingest import Section

__all__ = ["find_sections", "normalise_section_number", "heading_like"]

_NUM = r"\d{1,3}[A-Z]{0,3}"
_ROMAN_OR_NUM = r"(?:[IVXLCDM]+[A-Z]?|\d{1,3}[A-Z]?)"

# "420. Title.—", "1[4. Title.—", title possibly wrapping once (handled by the caller joining two lines).
_DASH_SECTION = re.compile(
    rf"^[ \t]*(?:\d{{1,3}}\s?\[)?(?P<num>{_NUM})\.[ \t]+"
    r"(?P<title>[A-Z“\"‘'(\[][^—–\n]{0,240}?(?:\n[^—–\n]{1,240}?)?)"
    r"[ \t]*(?:\.[ \t]?[—–]|—|\.[ \t]?-{1,2}(?=[ \t]|[A-Z(“\"‘'])|:[ \t]?[-—–])"
)
_SECTION_WORD = re.compile(
    rf"^[ \t]*(?:Section|SECTION|Sec\.)[ \t]+(?P<num>{_NUM})[ \t]*(?P<delim>[.:—–-]?)[ \t]*(?P<rest>[^\n]*)$"
)
# "Minimum Wages Act, 1948Section 24:" -- a heading glued to a running header in the PDF's own text.
_GLUED_SECTION_WORD = re.compile(rf"(?<=\S)Section[ \t]+(?P<num>{_NUM}):[ \t]*$")
_ARTICLE_WORD = re.compile(
    rf"^[ \t]*(?:Article|ARTICLE|Art\.)[ \t]+(?P<num>{_NUM})[ \t]*(?P<delim>[.:—–-]?)[ \t]*(?P<rest>[^\n]*)$"
)
_CHAPTER = re.compile(rf"^[ \t]*CHAPTER[ \t]+(?P<num>{_ROMAN_OR_NUM})\b\.?[ \t]*[-—–:.]?[ \t]*(?P<rest>[^\n]*)$")
_PART = re.compile(rf"^[ \t]*PART[ \t]+(?P<num>{_ROMAN_OR_NUM})\b\.?[ \t]*[-—–:.]?[ \t]*(?P<rest>[^\n]*)$")
_DECIMAL_HEADING = re.compile(r"^[ \t]*(?P<num>\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)[ \t]+(?P<rest>\S[^\n]{1,80})$")
_EXERCISE = re.compile(r"^[ \t]*EXERCISE[ \t]+(?P<num>\d{1,2}(?:\.\d{1,2})?)\b(?P<rest>[^\n]*)$")
_MARKDOWN = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<rest>[^\n]+?)[ \t]*#*[ \t]*$")

_CAPITALISED_WORD = re.compile(r"(?:^|[\s“\"‘'(\[])[A-Z][A-Za-z]")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.#-]+")


@dataclass(frozen=True)
class _Heading:
    start: int
    style: str  # "dash" | "section_word" | "article_word" | "chapter" | "part" | "heading"
    level: str
    section_id: str
    title: str | None


def normalise_section_number(raw: str) -> str:
    """A section/article number as it goes into ids: spaces and dots dropped, letters upper-cased.

    >>> normalise_section_number("239 A A"), normalise_section_number("21a."), normalise_section_number(7)
    ('239AA', '21A', '7')
    """
    return _ID_UNSAFE.sub("", str(raw).replace(".", "").upper())


def _clean_title(raw: str) -> str | None:
    title = " ".join(raw.split()).strip(" .:-—–")
    return title or None


def _has_capitalised_word(title: str) -> bool:
    return bool(_CAPITALISED_WORD.search(title))


def heading_like(line: str) -> bool:
    """True when a single line would be taken as a heading (used by cleaning to never drop one).

    >>> heading_like("420. Cheating.—Whoever cheats"), heading_like("Reprint 2026-27")
    (True, False)
    """
    return bool(_headings_in_line(line.strip(), 0, None))


def _title_like_line(line: str, max_len: int = 160) -> bool:
    stripped = line.strip()
    return 0 < len(stripped) <= max_len and _has_capitalised_word(stripped) and not stripped[0].isdigit()


def _word_style_heading(m: re.Match[str], next_line: str | None, style: str, level: str) -> _Heading | None:
    rest = m.group("rest").strip()
    delim = m.group("delim")
    if rest:
        # "Section 23 shall be renumbered ..." is prose: a title must follow a delimiter and be capitalised.
        if not delim or not _has_capitalised_word(rest) or not rest[0].isupper() and rest[0] not in "“\"‘'(":
            return None
        title = _clean_title(re.split(r"\.?[—–]|\.\s?-(?=\s)", rest, maxsplit=1)[0])
    else:
        title = _clean_title(next_line) if next_line is not None and _title_like_line(next_line) else None
    return _Heading(m.start(), style, level, normalise_section_number(m.group("num")), title)


_HEADING_FIRST_CHARS = frozenset("#SACPE")


def _may_head(line: str) -> bool:
    """Whether a heading can start on this line: every anchored pattern below starts with a digit, "#" or one of
    ``_HEADING_FIRST_CHARS``, the glued one holds "Section"; most lines are prose and fail this at once."""
    first = line.lstrip(" \t")[:1]
    return first.isdigit() or first in _HEADING_FIRST_CHARS or "Section" in line


def _headings_in_line(line: str, start: int, next_line: str | None) -> list[_Heading]:
    """Headings starting on one line (offsets relative to the text, given the line's start)."""
    found: list[_Heading] = []
    if not _may_head(line):
        return found
    window = line if next_line is None or line.rstrip().endswith(".") else f"{line}\n{next_line}"
    if m := _DASH_SECTION.match(window):
        title = m.group("title")
        # A wrapped title may not swallow the next numbered line (a table of contents).
        if "\n" not in title or not re.match(rf"\s*{_NUM}\.\s", title.split("\n", 1)[1]):
            if _has_capitalised_word(title) and not re.search(r"[=<>]", title):
                found.append(_Heading(start, "dash", "section", normalise_section_number(m.group("num")),
                                      _clean_title(title)))
                return found
    if m := _SECTION_WORD.match(line):
        if h := _word_style_heading(m, next_line, "section_word", "section"):
            return [_Heading(start, h.style, h.level, h.section_id, h.title)]
    if m := _GLUED_SECTION_WORD.search(line):
        title = _clean_title(next_line) if next_line is not None and _title_like_line(next_line) else None
        return [_Heading(start + m.start(), "section_word", "section", normalise_section_number(m.group("num")),
                         title)]
    if m := _ARTICLE_WORD.match(line):
        if h := _word_style_heading(m, next_line, "article_word", "article"):
            return [_Heading(start, h.style, h.level, h.section_id, h.title)]
    for pattern, level, prefix in ((_CHAPTER, "chapter", "Ch"), (_PART, "part", "Part")):
        if m := pattern.match(line):
            rest = m.group("rest").strip()
            if rest and not _has_capitalised_word(rest):
                continue
            title = rest or (next_line.strip() if next_line is not None and _title_like_line(next_line) else "")
            return [_Heading(start, level, level, prefix + normalise_section_number(m.group("num")),
                             _clean_title(title) if title else None)]
    if m := _DECIMAL_HEADING.match(line):
        rest = m.group("rest").strip()
        words = rest.split()
        if (
            _has_capitalised_word(rest)
            and rest[0].isalpha()
            and rest[-1] not in ".,;:"
            and len(words) <= 12
            and not re.search(r"[=<>+×÷]", rest)
        ):
            return [_Heading(start, "heading", "heading", m.group("num"), _clean_title(f"{m.group('num')} {rest}"))]
    if m := _EXERCISE.match(line):
        return [_Heading(start, "heading", "heading", "Ex" + m.group("num"),
                         _clean_title(f"EXERCISE {m.group('num')}{m.group('rest')}"))]
    if m := _MARKDOWN.match(line):
        rest = m.group("rest").strip()
        number = re.match(r"(\d{1,3}(?:\.\d{1,3})*)\.?\s", rest + " ")
        if number:
            section_id = number.group(1)
        else:
            words = re.findall(r"[A-Za-z0-9]+", rest)[:6]
            section_id = "".join(w[:1].upper() + w[1:] for w in words)[:40]
        if section_id:
            return [_Heading(start, "heading", "heading", section_id, _clean_title(rest))]
    return found


def _scan(text: str) -> list[_Heading]:
    headings: list[_Heading] = []
    lines = text.split("\n")
    offsets: list[int] = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    for i, line in enumerate(lines):
        if not line.strip() or not _may_head(line):
            continue  # (the next line is looked for only where a heading may start)
        next_line = next((lines[j] for j in range(i + 1, min(i + 3, len(lines))) if lines[j].strip()), None)
        for h in _headings_in_line(line, offsets[i], next_line):
            leading = len(line) - len(line.lstrip())
            # Offsets point at the heading's first visible character.
            start = h.start + leading if h.start == offsets[i] else h.start
            headings.append(_Heading(start, h.style, h.level, h.section_id, h.title))
    return headings


def _drop_table_of_contents(headings: list[_Heading]) -> list[_Heading]:
    """Chapter/part headings listed before the first section and repeated after it are a table of contents."""
    section_starts = [h.start for h in headings if h.level in ("section", "article")]
    if not section_starts:
        return headings
    first = min(section_starts)
    last_start = {h.section_id: h.start for h in headings if h.level in ("chapter", "part")}
    return [
        h for h in headings
        if not (h.start < first and h.level in ("chapter", "part") and last_start[h.section_id] > h.start)
    ]


def find_sections(text: str) -> tuple[Section, ...]:
    """Recover the structural segments of a cleaned text (see the module docstring for the forms).

    >>> s = find_sections("CHAPTER XVII\\nOF OFFENCES AGAINST PROPERTY\\n420. Cheating.—Whoever cheats.")
    >>> [(x.section_id, x.level, x.title) for x in s]
    [('ChXVII', 'chapter', 'OF OFFENCES AGAINST PROPERTY'), ('420', 'section', 'Cheating')]
    """
    headings = _scan(text)
    section_styles = Counter(h.style for h in headings if h.style in ("dash", "section_word", "article_word"))
    if len(section_styles) > 1:
        # Ties go to the India Code dash style, then "Section N", then "Article N".
        order = {"dash": 0, "section_word": 1, "article_word": 2}
        dominant = min(section_styles, key=lambda s: (-section_styles[s], order[s]))
        headings = [h for h in headings if h.style not in order or h.style == dominant]
    headings = _drop_table_of_contents(headings)
    sections: list[Section] = []
    seen: Counter[str] = Counter()
    for i, h in enumerate(headings):
        end = headings[i + 1].start if i + 1 < len(headings) else len(text)
        if end <= h.start:
            continue
        seen[h.section_id] += 1
        section_id = h.section_id if seen[h.section_id] == 1 else f"{h.section_id}#{seen[h.section_id]}"
        sections.append(
            Section(section_id=section_id, title=h.title, level=h.level, char_start=h.start, char_end=end)  # type: ignore[arg-type]
        )
    return tuple(sections)
