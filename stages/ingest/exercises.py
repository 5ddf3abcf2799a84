"""Exercises, activities and in-text questions: what a textbook asks its reader. A question is not evidence for its
own answer (issue 37: "Activity: Find out about the Jallianwala Bagh massacre" was cited as the answer to "How many
people were killed..."), so these blocks become sections of level ``exercise`` and their chunks are flagged
``exercise``: retrieval skips them and no context pack holds one.

``find_exercises(text)`` finds two kinds of block in cleaned text:

* end-of-chapter sets (``EXERCISES``, ``EXERCISE 5.1``, ``Review Questions``): from the title to the next
  heading the text's sections start at (``5.3 nth Term of an AP``), a numbered heading, a closing heading (``Summary``, ``What you have learnt``, ``Key Terms``...) or
  the end of the text;
* boxes (``Activity 1.2``, ``QUESTIONS``, ``TRY THESE``, ``Let us do``, ``Think and Act``...): the title, what
  precedes the first item (a caution, a sentence of set-up, at most ``_MAX_LEAD_LINES`` lines), then items (a
  line after a bullet or a number, up to the end of its sentence) while the next line opens another item; a lone
  ``?`` (the box's ornament) closes it. A box without item markers is its narrow lines (a box's column is narrower
  than the page's) up to the last that ends a sentence. A title spelled one letter per line (``Q``, ``U``, ``E``, ... an overlay
  in the PDF) is read as its word.

A block's id is its title in CamelCase with its number (``Activity1.2``, ``Questions``, ``Ex5.1`` as
``stages.ingest.sections`` names an exercise), made unique with ``#2``...

>>> text = "Acids are sour.\\nActivity 2.1\\nn\\nTake some litmus.\\nn\\nWhat do you observe?\\nAcids turn blue litmus red."
>>> [(s.section_id, text[s.char_start:s.char_end].splitlines()[-1]) for s in find_exercises(text)]
[('Activity2.1', 'What do you observe?')]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from contracts.ingest import Section

__all__ = ["EXERCISE_FLAG", "find_exercises"]

EXERCISE_FLAG = "exercise"

_SET_TITLE = re.compile(
    r"^\s*(?:(?P<ex>EXERCISE|Exercise)\s+(?P<num>\d{1,2}(?:\.\d{1,2})*)|EXERCISES|Exercises|Review\s+Questions"
    r"|REVIEW\s+QUESTIONS|Questions\s+for\s+(?:Discussion|Practice)|Intext\s+Questions)\s*$"
)
_BOX_TITLE = re.compile(
    r"^\s*(?:(?P<word>Activity|ACTIVITY)(?:\s+(?P<num>\d{1,2}(?:\.\d{1,2})*))?|QUESTIONS|Questions|TRY\s+THESE"
    r"|Try\s+These|Let\s+us\s+(?:do|discuss)|Do\s+th(?:is|ese)|Think\s+and\s+Act|Check\s+Your\s+Progress"
    r"|Let\s+Us\s+(?:Do|Discuss))\s*:?\s*$"
)
_CLOSING = re.compile(
    r"^\s*(?:\d{1,2}(?:\.\d{1,2})+\s+[A-Z].{0,80}|CHAPTER\s+\S+.*|Chapter\s+\d+.*|Summary|SUMMARY|What\s+you\s+have\s+learnt"
    r"|WHAT\s+YOU\s+HAVE\s+LEARNT|Key\s+Terms|KEY\s+TERMS|Key\s+Words|Glossary|GLOSSARY|Weblinks|Pedagogical\s+Hints"
    r"|Project\s+Ideas|Points\s+to\s+Ponder|POINTS\s+TO\s+PONDER)\s*$"
)
_MARKER = re.compile(r"^\s*(?:[n■•●▪◆–\-*]|\d{1,2}[.)]|\([ivxa-h]{1,4}\)|[a-h][.)])(?:\s+|$)")
_LONE_MARKER = re.compile(r"^\s*(?:[n■•●▪◆–\-*]|\d{1,2}[.)]|\([ivxa-h]{1,4}\))\s*$")
_SENTENCE_END = re.compile(r"[.?!:)]\s*$")
_MAX_LEAD_LINES = 5
_MAX_NARROW_LINES = 15
_NARROW_SHARE = 0.7  # of the text's median line length: a box's column
_FIGURE = re.compile(r"^\s*(?:Fig(?:ure)?\.?\s*\d|Table\s+\d)")
_SPELLED = {"QUESTIONS": "QUESTIONS", "EXERCISES": "EXERCISES", "EXERCISE": "EXERCISES", "ACTIVITY": "ACTIVITY"}


def _offsets(lines: list[str]) -> list[int]:
    out, pos = [], 0
    for line in lines:
        out.append(pos)
        pos += len(line) + 1
    return out


def _spelled_title(lines: list[str], i: int) -> tuple[str, int] | None:
    """A title written one capital per line from line ``i`` (``Q``, ``U``, ``E``...): the word and its last line."""
    letters: list[str] = []
    j = i
    while j < len(lines) and re.fullmatch(r"\s*[A-Z]\s*", lines[j]) and len(letters) < 10:
        letters.append(lines[j].strip())
        j += 1
    word = "".join(letters)
    return (_SPELLED[word], j - 1) if word in _SPELLED else None


def _lead_end(lines: list[str], first: int) -> int | None:
    """The first item's line after a box title: set-up (a caution) may come first, but no figure or new title."""
    for j in range(first, min(first + _MAX_LEAD_LINES + 1, len(lines))):
        if _MARKER.match(lines[j]):
            return j
        if _FIGURE.match(lines[j]) or _BOX_TITLE.match(lines[j]) or _SET_TITLE.match(lines[j]) or not lines[j].strip():
            return None
    return None


def _narrow_box_end(lines: list[str], first: int, narrow: int) -> int:
    """A box without item markers (hess208.pdf: "Activity" / "Find out about the" / "Jallianwala Bagh" /
    "massacre. What is" ...): the narrow lines after the title, up to the last that ends a sentence."""
    end = first - 1
    for j in range(first, min(first + _MAX_NARROW_LINES, len(lines))):
        line = lines[j]
        if not line.strip() or len(line) > narrow or _FIGURE.match(line) or _CLOSING.match(line) \
                or _BOX_TITLE.match(line) or _SET_TITLE.match(line):
            break
        if _SENTENCE_END.search(line):
            end = j
    return end


def _ends_box(line: str) -> bool:
    return bool(not line.strip() or _CLOSING.match(line) or _BOX_TITLE.match(line) or _SET_TITLE.match(line))


def _box_end(lines: list[str], first: int, narrow: int) -> int:
    """The last line of a box whose title is line ``first - 1`` (see the module docstring); ``first - 1`` when the
    title stands alone (an overlay label repeated over a figure)."""
    end = first - 1
    lead_stop = _lead_end(lines, first)
    if lead_stop is None:
        return _narrow_box_end(lines, first, narrow)
    i = lead_stop
    while i < len(lines):
        line = lines[i]
        if line.strip() == "?":
            return i  # the box's closing ornament
        if _ends_box(line) or not (_MARKER.match(line) or (len(line) <= narrow and not _FIGURE.match(line))):
            break
        # One item (or a narrow line of the box's column): its marker line, then lines up to the end of its sentence
        # or the line before the next marker.
        j = i + 1 if _LONE_MARKER.match(line) else i
        while j < len(lines) and j - i < 12:
            if j > i and (_MARKER.match(lines[j]) or _ends_box(lines[j]) or lines[j].strip() == "?"):
                j -= 1
                break
            if _SENTENCE_END.search(lines[j]):
                break
            j += 1
        end = max(end, min(j, len(lines) - 1))
        i = end + 1
        while i < len(lines) and not lines[i].strip():
            i += 1
    return end


def _set_end(lines: list[str], first: int, stops: frozenset[int]) -> int:
    """The last line of an end-of-chapter set whose title is line ``first - 1``: before the next heading (a line in
    ``stops``), closing title or set title."""
    for i in range(first, len(lines)):
        if i in stops or _CLOSING.match(lines[i]) or (_SET_TITLE.match(lines[i]) and i > first):
            return max(first - 1, i - 1)
    return len(lines) - 1


def _block_id(title: str) -> str:
    if m := _SET_TITLE.match(title):
        if m.group("ex"):
            return "Ex" + m.group("num")
    words = re.findall(r"[A-Za-z]+|\d+(?:\.\d+)*", title)
    return "".join(w[:1].upper() + w[1:].lower() if w[:1].isalpha() else w for w in words)[:40] or "Exercise"


def find_exercises(text: str, headings: Sequence[Section] = ()) -> tuple[Section, ...]:
    """The exercise sets, activities and question boxes of a cleaned text, in text order (see the module
    docstring). ``headings``: the text's recovered sections (``stages.ingest.sections``); a set ends where the next
    of them starts ("5.3 nth Term of an AP" after EXERCISE 5.2)."""
    lines = text.split("\n")
    offsets = _offsets(lines)
    line_at = {offset: i for i, offset in enumerate(offsets)}
    stops = frozenset(line_at[h.char_start] for h in headings
                      if h.char_start in line_at and not h.section_id.startswith("Ex"))
    lengths = sorted(len(line) for line in lines if len(line.split()) >= 3)
    narrow = int(_NARROW_SHARE * lengths[len(lengths) // 2]) if lengths else 0
    blocks: list[tuple[int, int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        spelled = _spelled_title(lines, i) if re.fullmatch(r"\s*[A-Z]\s*", line) else None
        title, title_end = (spelled[0], spelled[1]) if spelled else (line.strip(), i)
        if spelled is None and not (_SET_TITLE.match(line) or _BOX_TITLE.match(line)):
            i += 1
            continue
        if _SET_TITLE.match(title) or title == "EXERCISES":
            last = _set_end(lines, title_end + 1, stops)
        else:
            last = _box_end(lines, title_end + 1, narrow)
        if last > title_end or _SET_TITLE.match(title):
            start = offsets[i] + (len(lines[i]) - len(lines[i].lstrip()))
            blocks.append((start, offsets[last] + len(lines[last]), title))
        i = max(last, title_end) + 1
    seen: Counter[str] = Counter()
    sections: list[Section] = []
    for start, end, title in blocks:
        if end <= start:
            continue
        base = _block_id(title)
        seen[base] += 1
        sections.append(Section(section_id=base if seen[base] == 1 else f"{base}#{seen[base]}", title=title,
                                level="exercise", char_start=start, char_end=end))
    return tuple(sections)
