"""A code's provisions, read from its text: section number, heading, body and the drafters' *Illustrations*.

Two sources are read:

* an Act's text as a PDF yields it (the BNS): a section opens a line with its number and its heading ending in
  ".—" ("25. Act not intended ... by consent.—Nothing which ..."); the arrangement of sections at the front has
  no ".—" and is never a section. Numbers only go up (a sub-section "(2)" or a page number is not a section).
* the civictech JSON of the Indian Acts (one record a section: ``Section``, ``section_title``,
  ``section_desc``), which carries no illustrations.

An *Illustrations* block runs from its label to the next sub-section, *Explanation*, *Exception* or section;
its items are "(a) ...", "(b) ..." (or one unlabelled scenario).

>>> text = "3. General.—Text.\\nIllustration.\\nA hits Z. A commits no offence.\\n4. Next.—More."
>>> [(p.section, p.title, p.illustrations) for p in statute_provisions("BNS", text)]
[('3', 'General', ('A hits Z. A commits no offence.',)), ('4', 'Next', ())]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from contracts.questions import Provision

__all__ = ["statute_provisions", "json_provisions"]

_HEADING = re.compile(r"(?m)^(\d{1,3})([A-Z]{0,2})\.\s+((?:[^\n]*?\n?){1,4}?)\.?\s*[—–-]{1,2}(?=\S|\s)")
_PAGE_NUMBER = re.compile(r"(?m)^\s*\d{1,4}\s*$\n?")
_ILLUSTRATIONS = re.compile(r"(?m)^\s*Illustrations?\.?\s*$")
_STOP = re.compile(r"(?m)^\s*(?:\(\d+\)\s|Explanation\s*\d*\s*\.?\s*[—–-]|Exception\s*\d*\s*\.?\s*[—–-]|"
                   r"Illustrations?\.?\s*$)")
_ITEM = re.compile(r"(?m)^\s*\(([a-z]{1,2})\)\s+")
_SPACE = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _illustrations(body: str) -> tuple[str, ...]:
    items: list[str] = []
    for label in _ILLUSTRATIONS.finditer(body):
        rest = body[label.end():]
        stop = _STOP.search(rest)
        block = rest[: stop.start()] if stop else rest
        marks = list(_ITEM.finditer(block))
        if not marks:
            if _flat(block):
                items.append(_flat(block))
            continue
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(block)
            item = _flat(block[mark.end(): end])
            if item:
                items.append(item)
    return tuple(items)


def _body_without_illustrations(body: str) -> str:
    out, pos = [], 0
    for label in _ILLUSTRATIONS.finditer(body):
        out.append(body[pos: label.start()])
        rest = body[label.end():]
        stop = _STOP.search(rest)
        pos = label.end() + (stop.start() if stop else len(rest))
    out.append(body[pos:])
    return _flat(" ".join(out))


def statute_provisions(code: str, text: str) -> tuple[Provision, ...]:
    """Every section of ``text`` whose number follows the last one found, with its illustrations."""
    text = _PAGE_NUMBER.sub("", text.replace("\r", ""))
    heads: list[tuple[int, int, str, str]] = []  # (start, body start, section, title)
    last = 0
    for match in _HEADING.finditer(text):
        number = int(match.group(1))
        title = _flat(match.group(3)).rstrip(".")
        if not title or len(title) > 300 or not (last < number <= last + 30 or (number == last and match.group(2))):
            continue
        last = number
        heads.append((match.start(), match.end(), match.group(1) + match.group(2), title))
    provisions = []
    for i, (_, body_start, section, title) in enumerate(heads):
        body = text[body_start: heads[i + 1][0] if i + 1 < len(heads) else len(text)]
        provisions.append(Provision(code=code, section=section, title=title,
                                    text=_body_without_illustrations(body), illustrations=_illustrations(body)))
    return tuple(provisions)


def json_provisions(code: str, records: Iterable[Mapping[str, object]]) -> tuple[Provision, ...]:
    """The civictech JSON records of one Act as provisions (no illustrations: that data set drops them)."""
    out = []
    for record in records:
        section = str(record.get("Section", "")).strip()
        text = _flat(str(record.get("section_desc", "")))
        if section and text:
            out.append(Provision(code=code, section=section, title=_flat(str(record.get("section_title", ""))),
                                 text=text))
    return tuple(out)
