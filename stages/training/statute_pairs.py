"""Verifier training pairs from statutes: a question made from a section's title, against that section and
against its neighbours.

The commonest wrong answer on statute questions is a real provision next to the right one: the definition of
theft (s.378) for "what is the punishment for theft?" (s.379), or the aggravated form beside the plain one.
Per section with a title, questions come from the title by a few fixed phrasings (a seeded draw among those
that fit it), and each is paired with:

* ``title_question`` (1): its own section;
* ``neighbour_section`` (0): the sections just before and after it in the Act;
* ``similar_title`` (0): the other section of the Act whose title shares most words with its title.

Half of the passages (seeded) drop their heading line, so the body has to carry the match.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from contracts.verifier import LabelledPair, VerifierPair

__all__ = ["StatuteSection", "statute_pairs", "title_questions"]

SOURCE = "statutes"
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("of the a an and or to for in on by with under be as at from any its".split())


@dataclass(frozen=True)
class StatuteSection:
    act: str
    section: str
    title: str
    text: str

    @property
    def passage(self) -> str:
        return f"Section {self.section}. {self.title}\n{self.text}".strip()


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def title_questions(title: str) -> list[str]:
    """Questions a reader might ask that this title answers (the fitting phrasings, in a fixed order)."""
    title = title.strip().rstrip(".").strip()
    if not title:
        return []
    match = re.match(r"(?i)^punishment (?:for|of) (.+)$", title)
    if match:
        x = _lower_first(match.group(1))
        return [f"What is the punishment for {x}?", f"How is {x} punished?",
                f"What penalty applies to {x}?", f"What sentence can be given for {x}?"]
    match = re.match(r"(?i)^(.+?)\s+defined$|^definition of (.+)$", title)
    if match:
        x = _lower_first(match.group(1) or match.group(2))
        return [f"What is {x}?", f"What is the legal definition of {x}?", f"What does {x} mean in law?"]
    match = re.match(r"(?i)^of (.+)$", title)
    x = _lower_first(match.group(1) if match else title)
    questions = [f"What does the law say about {x}?", f"Which provision deals with {x}?"]
    if len(x.split()) <= 4:
        questions += [f"What is {x}?", f"What is the meaning of {x}?"]
    return questions


def _title_words(title: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(title.lower()) if w not in _STOP)


def statute_pairs(
    acts: Sequence[Sequence[StatuteSection]], *, seed: int, questions_per_section: int = 2,
    drop_heading_rate: float = 0.5,
) -> list[LabelledPair]:
    """Labelled pairs from Acts given as their sections in order, deterministic for a seed."""
    rng = random.Random(seed)
    out: list[LabelledPair] = []

    def passage(section: StatuteSection) -> str:
        if section.text.strip() and rng.random() < drop_heading_rate:
            return section.text.strip()
        return section.passage

    for sections in acts:
        words = [_title_words(s.title) for s in sections]
        for i, section in enumerate(sections):
            asked = title_questions(section.title)
            if not asked or not section.text.strip():
                continue
            group = f"{SOURCE}:{section.act}:{section.section}"
            similar = max((k for k in range(len(sections)) if k != i and sections[k].title != section.title),
                          key=lambda k: (len(words[k] & words[i]), -abs(k - i)), default=None)
            negatives = [k for k in (i - 1, i + 1) if 0 <= k < len(sections)]
            if similar is not None and similar not in negatives and words[similar] & words[i]:
                negatives.append(similar)
            for question in rng.sample(asked, min(questions_per_section, len(asked))):
                out.append(LabelledPair(pair=VerifierPair(task="answers", text=question, passage=passage(section)),
                                        label=1, source=f"{SOURCE}.title_question", group=group))
                for k in negatives:
                    other = sections[k]
                    if not other.text.strip() or other.title.strip().lower() == section.title.strip().lower():
                        continue
                    kind = "similar_title" if k == similar and abs(k - i) > 1 else "neighbour_section"
                    out.append(LabelledPair(pair=VerifierPair(task="answers", text=question, passage=passage(other)),
                                            label=0, source=f"{SOURCE}.{kind}", group=group))
    return out
