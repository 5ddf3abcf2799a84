"""Provisions in an answer: which section a chunk id carries, and the labels that set close provisions apart.

When an answer quotes two or more provisions (close ones packed side by side by ``stages.retrieval.context``, or
neighbours the answerer found relevant), each is shown with its section, its title and the words of its
title the others lack: the condition that separates it ("Section 324 (Voluntarily causing hurt by dangerous
weapons or means), if by dangerous weapons or means: Whoever ..."). Every word of a label comes from its own
chunk, so a labelled sentence is still supported by the chunk it cites.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

__all__ = ["MAX_PROVISIONS", "section_of_id", "provision_labels", "without_title", "first_of_provision"]

_MIN_LABELLED_WORDS = 3


class _Cited(Protocol):
    source_id: str


_ID_SECTION = re.compile(r"_([^_]+)_\d+(?:\.\d+)?$")


def section_of_id(semantic_id: str) -> tuple[str, str] | None:
    """``(doc_code, section)`` carried by a chunk id, or None for an id without the ``_<section>_<n>`` tail.

    >>> section_of_id("IPC_420_0"), section_of_id("Minimum_Wages_2_1.1"), section_of_id("x")
    (('IPC', '420'), ('Minimum_Wages', '2'), None)
    """
    match = _ID_SECTION.search(semantic_id)
    if match is None or match.start() == 0:
        return None
    return semantic_id[: match.start()], match.group(1)


MAX_PROVISIONS = 3
"""Close provisions shown side by side in one answer, at most."""

# "Section 324. Voluntarily causing hurt by dangerous weapons or means" (records) or "324. Voluntarily causing
# hurt ....—Whoever" (statute PDFs): a provision's number and title at the head of its chunk.
_TITLE_LINE = re.compile(r"^\s*(?:Section\s+)?(\d{1,4}[A-Z]{0,3})\.\s+([^\n]+?)(?:\.?\s*[—–]|\.\s+(?=[A-Z])|\n|$)")


def _title_of(text: str, section: str) -> str | None:
    match = _TITLE_LINE.match(text)
    if match is None or match.group(1).lower() != section.lower() or len(match.group(2).split()) > 20:
        return None
    return match.group(2).strip().rstrip(" .;:,")


# Title words that frame a provision rather than state its condition ("Punishment for ...").
_TITLE_FRAME = frozenset("punishment penalty for of the a an or and by to in with on as etc".split())


def provision_labels(source_ids: list[str], texts: dict[str, str]) -> dict[str, str] | None:
    """When an answer quotes two or more provisions (``texts``: each chunk's first line, or its text), the label
    each is shown with: its section, its title and
    the words of its title that no other quoted provision's title has (the condition that separates it):
    ``Section 324 (Voluntarily causing hurt by dangerous weapons or means), if by dangerous weapons or means``.
    Only the first ``MAX_PROVISIONS`` provisions keep a label (the others are dropped from the answer); None
    when the answer quotes a single provision, or when a provision's chunk does not open with its number and
    title (then nothing is labelled). Every word of a label comes from its own chunk, so a labelled sentence is
    still supported by the chunk it cites.

    >>> texts = {"IPC_323_0": "Section 323. Punishment for voluntarily causing hurt\\nWhoever ...",
    ...          "IPC_324_0": "Section 324. Voluntarily causing hurt by dangerous weapons or means\\nWhoever ..."}
    >>> provision_labels(["IPC_324_0", "IPC_323_0"], texts)["IPC_324_0"]
    'Section 324 (Voluntarily causing hurt by dangerous weapons or means), if by dangerous weapons or means'
    >>> provision_labels(["IPC_324_0", "IPC_323_0"], texts)["IPC_323_0"]
    'Section 323 (Punishment for voluntarily causing hurt)'

    One section number in two codes is labelled with each code:

    >>> provision_labels(["IPC_302_0", "BNS_302_0"], {"IPC_302_0": "302. Punishment for murder.—Whoever ...",
    ...                  "BNS_302_0": "302. Uttering words, etc.—Whoever ..."})["BNS_302_0"]
    'BNS section 302 (Uttering words, etc)'
    """
    sections: dict[tuple[str, str], list[str]] = {}
    for source_id in source_ids:
        key = section_of_id(source_id)
        if key is not None:
            sections.setdefault(key, []).append(source_id)
    if len(sections) < 2:
        return None
    kept = list(sections)[:MAX_PROVISIONS]
    titles = {key: _title_of(texts.get(sections[key][0], ""), key[1]) for key in kept}
    if not all(titles.values()):
        return None  # a label must come from its own chunk: every provision must open with its number and title
    labels: dict[str, str] = {}
    numbers = [key[1].lower() for key in kept]
    for key in kept:
        title = titles[key]
        if numbers.count(key[1].lower()) > 1:
            # One number in several codes (IPC 302, BNS 302): the code tells them apart, not a condition.
            for source_id in sections[key]:
                labels[source_id] = f"{key[0]} section {key[1]} ({title})"
            continue
        label = f"Section {key[1]} ({title})"
        if title:
            others = {w.lower() for k, t in titles.items() if k != key and t for w in re.findall(r"[A-Za-z]+", t)}
            words = title.split()
            parts = [[p.lower() for p in re.findall(r"[A-Za-z]+", w)] for w in words]
            bare = [" ".join(p) for p in parts]
            flags = [any(p not in others and p not in _TITLE_FRAME for p in ps) for ps in parts]
            if any(flags):
                # From the first distinguishing word (with its preposition) to the title's end: "by dangerous
                # weapons or means", "for ten or more days".
                first = flags.index(True)
                if first > 0 and bare[first - 1] in {"by", "of", "to", "for", "in", "with", "after", "on"}:
                    first -= 1
                label += ", if " + " ".join(words[first:]).rstrip(" .;:,")
        for source_id in sections[key]:
            labels[source_id] = label
    return labels


def without_title(quote: str, label: str) -> str:
    """The quote without the provision title its label already shows (a record's title line runs into its
    first sentence: "Punishment for wrongful confinement Whoever ...")."""
    title = label[label.find("(") + 1 : label.find(")")] if "(" in label else ""
    rest = quote[len(title) :].lstrip(" .—–-") if title and quote.startswith(title) else quote
    return rest if len(rest.split()) >= _MIN_LABELLED_WORDS else quote


def first_of_provision(chosen: Sequence[_Cited]) -> list[bool]:
    """For each quoted unit, whether it is the first one of its provision (the one that carries the label)."""
    seen: set[tuple[str, str] | str] = set()
    out = []
    for candidate in chosen:
        key = section_of_id(candidate.source_id) or candidate.source_id
        out.append(key not in seen)
        seen.add(key)
    return out
