"""Shared text units for grounding: sentences, content words, numbers and citation markers.

Every check that compares an answer with its evidence goes through these functions, so the answer
and the chunk text are always cut and normalised the same way. What a word, a stop word and a stem are is
decided by ``stages.text.normalise`` (the one normaliser BM25 uses too); this module adds what grounding
needs on top: citations stripped from answers, brackets read as text in evidence, numbers, sentences.

>>> split_sentences("Rs. 10,000 is the fine [A]. It applies.")
['Rs. 10,000 is the fine [A].', 'It applies.']
"""

from __future__ import annotations

import re
from typing import NamedTuple

from stages.text.normalise import CLAIM_STOPWORDS, claim_terms, stem, words

__all__ = [
    "CITATION_GROUP",
    "STAGE_VERSION",
    "META_WORDS",
    "META_STEMS",
    "split_sentences",
    "AnswerUnit",
    "split_answer_units",
    "strip_citations",
    "content_words",
    "numbers_in",
    "normalise_space",
    "is_meta_statement",
    "evidence_words",
    "evidence_numbers",
    "word_stems",
    "words_and_stems",
]

STAGE_VERSION = "text_units.v1"

# One bracket holding one or more ids separated by "," or ";". Ids: letters, digits and _ . # - /
_ID = r"[A-Za-z0-9_.#/\-]+"
CITATION_GROUP = re.compile(rf"\[\s*({_ID}(?:\s*[,;]\s*{_ID})*)\s*\]")

# Words a meta-statement is made of ("Based on the evidence:"). A sentence made only of these (and
# stopwords) makes no claim and needs no citation.
META_WORDS: frozenset[str] = frozenset(
    """based evidence evidences document documents source sources context provided following answer answers
    summary summarise summarize question questions information retrieved text passage passages excerpt
    excerpts here below above given follows follow relevant cited citation citations note""".split()
)

# Abbreviations after which a period does not end a sentence.
_ABBREVIATIONS = frozenset(
    """rs no nos sec secs s ss art arts cl cls e.g i.e viz etc vs v mr mrs ms dr prof st ltd co inc govt dept
    fig figs eq eqs ch vol pp p para paras sch ord r rr u.s u.k""".split()
)

# A terminator before a capital/digit ends a sentence; so does a terminator right after a citation
# ("... [A]. the next claim"), whatever follows, so no claim can hide behind another sentence's citation.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|(?<=\][.!?])\s+")
_CITATIONS_ONLY = re.compile(rf"^(?:\s*{CITATION_GROUP.pattern}\s*[.,;:]?)+\s*$")


def normalise_space(text: str) -> str:
    """Collapse every run of whitespace to one space and trim.

    >>> normalise_space(" a\\n\\tb ")
    'a b'
    """
    return " ".join(text.split())


def _ends_with_abbreviation(piece: str) -> bool:
    last = piece.rstrip().rsplit(None, 1)[-1] if piece.strip() else ""
    token = last.rstrip(".").lower().lstrip("(\"'")
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def split_sentences(text: str) -> list[str]:
    """Cut text into sentences: at newlines and at . ! ? followed by a capital, digit or opening mark.

    A period after an abbreviation ("Rs.", "Sec.", "e.g.") or a single letter does not end a sentence.
    A fragment made only of citations ("[A].") is attached to the sentence before it.

    >>> split_sentences("Cancellations are allowed within 30 days. [policy_a.pdf#section-3]")
    ['Cancellations are allowed within 30 days. [policy_a.pdf#section-3]']
    >>> split_sentences("Theft is punished [A]. the fine is unlimited.")
    ['Theft is punished [A].', 'the fine is unlimited.']
    """
    sentences: list[str] = []
    for line in text.splitlines():
        line = normalise_space(line)
        if not line:
            continue
        pieces: list[str] = []
        start = 0
        for match in _SENTENCE_END.finditer(line):
            candidate = line[start : match.start()]
            if _ends_with_abbreviation(candidate.rstrip("\"')]")):
                continue
            pieces.append(line[start : match.end()].strip())
            start = match.end()
        pieces.append(line[start:].strip())
        for piece in pieces:
            if not piece:
                continue
            if sentences and _CITATIONS_ONLY.match(piece):
                sentences[-1] = f"{sentences[-1]} {piece}"
            else:
                sentences.append(piece)
    return sentences


def strip_citations(text: str) -> str:
    """The text with every citation bracket removed (what the claim itself says).

    >>> strip_citations("Theft is punishable [IPC_379_0; IPC_378_0].")
    'Theft is punishable .'
    """
    return CITATION_GROUP.sub(" ", text).replace("  ", " ").strip()


def content_words(text: str) -> frozenset[str]:
    """Stemmed, lower-cased words of the text that can carry a claim (no stopwords, no citations):
    ``stages.text.normalise.claim_terms`` of the text without its citations.

    >>> sorted(content_words("According to [IPC_420_0], cheating is punished."))
    ['cheat', 'punish']
    """
    return claim_terms(strip_citations(text))


_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1_000, "lakh": 100_000, "lakhs": 100_000, "million": 1_000_000,
           "crore": 10_000_000, "crores": 10_000_000, "billion": 1_000_000_000}
# "one" is a pronoun as often as a number: it counts only before a unit or scale ("one year", "one lakh").
_QUANTITY_NOUNS = frozenset(
    """year years month months week weeks day days hour hours minute minutes rupee rupees paise percent
    time times term terms member members person persons witness witnesses hundred thousand lakh lakhs crore
    crores million billion""".split()
)
# Punctuation is kept as its own token so that a number phrase never runs across it ("seven. Seven").
_NUMBER_TOKEN = re.compile(r"\d+(?:,\d+)*(?:\.\d+)?|[a-z]+|[^\sa-z0-9]")


def numbers_in(text: str) -> frozenset[float]:
    """Every quantity in the text as a number: digits ("10,000", "1,00,000", "2.5") and number words
    ("seven", "twenty-one", "ten thousand", "two lakh"). Citations are ignored.

    >>> sorted(numbers_in("Rs. 10,000 or ten thousand, for seven years under section 420 [IPC_420_0]"))
    [7.0, 420.0, 10000.0]
    """
    tokens = _NUMBER_TOKEN.findall(strip_citations(text).lower().replace("-", " "))
    found: set[float] = set()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token[0].isdecimal():
            value = float(token.replace(",", ""))
            # "2 lakh", "10 crore"
            if i + 1 < len(tokens) and tokens[i + 1] in _SCALES:
                value *= _SCALES[tokens[i + 1]]
                i += 1
            found.add(value)
            i += 1
            continue
        if token in _UNITS or token in _TENS:
            total, current, j = 0, 0, i
            while j < len(tokens):
                word = tokens[j]
                previous = tokens[j - 1] if j > i else ""
                # "twenty one", "hundred and five": a unit follows a tens/scale word; "seven seven" is two numbers.
                if word in _UNITS and (j == i or previous in _TENS or previous in _SCALES or previous == "and"):
                    current += _UNITS[word]
                elif word in _TENS and (j == i or previous in _SCALES or previous == "and"):
                    current += _TENS[word]
                elif word in _SCALES and (current or total):
                    scale = _SCALES[word]
                    if scale == 100:
                        current *= 100
                    else:
                        total += current * scale
                        current = 0
                elif word == "and" and j > i and tokens[j - 1] in _SCALES and j + 1 < len(tokens) and (
                    tokens[j + 1] in _UNITS or tokens[j + 1] in _TENS
                ):
                    pass  # "one hundred and twenty"
                else:
                    break
                j += 1
            value = total + current
            is_lone_one = token == "one" and j == i + 1
            next_word = tokens[j] if j < len(tokens) else ""
            if not is_lone_one or next_word in _QUANTITY_NOUNS:
                found.add(float(value))
            i = j
            continue
        i += 1
    return frozenset(found)


META_STEMS = frozenset(stem(w) for w in META_WORDS)


def is_meta_statement(text: str) -> bool:
    """True when the text makes no claim: only meta words ("Based on the evidence:") and no numbers.

    >>> is_meta_statement("Based on the provided evidence:"), is_meta_statement("Theft is punishable.")
    (True, False)
    """
    return content_words(text) <= META_STEMS and not numbers_in(text)


def _unbracket(text: str) -> str:
    # The same mapping the extractive backend applies when it quotes a document.
    return text.replace("[", "(").replace("]", ")")


def evidence_words(text: str) -> frozenset[str]:
    """Content words of evidence text; brackets in a document are text there, not citations."""
    return content_words(_unbracket(text))


def evidence_numbers(text: str) -> frozenset[float]:
    """Quantities in evidence text; brackets in a document are text there, not citations."""
    return numbers_in(_unbracket(text))


def word_stems(text: str) -> frozenset[str]:
    """Every stemmed word of the text, stopwords included ("not" matters here); brackets read as text.

    >>> sorted(word_stems("Not punishable [A]"))
    ['a', 'not', 'punish']
    """
    return frozenset(stem(w) for w in words(_unbracket(text)))


def words_and_stems(text: str, *, evidence: bool = False) -> tuple[frozenset[str], frozenset[str]]:
    """``(content_words, word_stems)`` of the text from one pass (the validator's hot path). With
    ``evidence=True`` brackets read as text (a document's brackets are not citations).

    >>> [sorted(part) for part in words_and_stems("Not punishable [A]")]
    [['punish'], ['not', 'punish']]
    """
    plain = _unbracket(text) if evidence else strip_citations(text)
    content: set[str] = set()
    stems: set[str] = set()
    for word in words(plain):
        stemmed = stem(word)
        stems.add(stemmed)
        if word not in CLAIM_STOPWORDS:
            content.add(stemmed)
    return frozenset(content), frozenset(stems)


# --- answers as people and LLMs write them -----------------------------------------------------------

# "1. ", "2) ", "- ", "* ", "+ ", "• " opening a line; a quote's "> ".
_LIST_MARKER = re.compile(r"^(?:[-*+•‣◦▪]|\d{1,2}[.)])\s+")
_QUOTE_MARKER = re.compile(r"^(?:>\s?)+")
_HEADING_MARKER = re.compile(r"^#{1,6}\s+")
# Markdown emphasis and code marks: "**x**", "__x__", "*x*", "_x_", "`x`" (never inside a citation id).
_EMPHASIS = re.compile(r"\*\*|__|`|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|(?<!\w)_(?=\w)|(?<=\w)_(?!\w)")
# Cheap pre-test: an emphasis or code mark may be present (an "_" inside a citation id is not one).
_MARKUP_HINT = re.compile(r"[*`]|(?<!\w)_|_(?!\w)")
_WHOLLY_EMPHASISED = re.compile(r"^(\*\*|__)[^*_]+\1:?$")
# A line is finished when it ends a sentence (closing quotes/brackets/emphasis allowed) or with a citation.
_FINISHED_LINE = re.compile(rf"(?:[.!?][\"'”’)\]*_]*|{CITATION_GROUP.pattern}[.!?;,]?)$")
_MAY_FINISH = frozenset(".!?\"')]*_;,”’")
# A bare "Yes." / "No," opening an answer: a reply to the question, said by the sentence after it.
_BARE_YES_NO = re.compile(r"^(?:yes|no)\s*[.!,:;—–-]?$", re.IGNORECASE)


class AnswerUnit(NamedTuple):
    """One sentence of an answer as written. ``heading`` marks a title or a lead-in line
    ("## Punishment", "**Key points**", "According to the IPC:"): it names a topic and may
    stand uncited only if it asserts nothing (the validator decides)."""

    text: str
    heading: bool = False


def _plain_markdown(line: str) -> str:
    if not _MARKUP_HINT.search(line):
        return line
    parts = CITATION_GROUP.split(line)
    # CITATION_GROUP has one group: odd parts are the ids inside a bracket; keep those as they are.
    out = []
    for index, part in enumerate(parts):
        out.append(f"[{part}]" if index % 2 else _EMPHASIS.sub("", part))
    return "".join(out)


def split_answer_units(text: str) -> list[AnswerUnit]:
    """Cut an answer into the sentences it really has, as people and LLMs format them.

    List markers, quote marks and markdown emphasis are dropped; a line that does not end a sentence (a
    hard wrap, a list's lead-in ending in ":" or ",", an item without its citation yet) continues on the
    next line; a blank line ends a block; a heading or a lead-in ending in ":" becomes a ``heading`` unit; a
    bare "Yes." line joins the sentence after it. Each block is then cut by :func:`split_sentences`.

    >>> [u.text for u in split_answer_units("Yes.\\n\\n1. **Theft** is punished\\nwith fine [A].\\n2. It is *cognizable* [A].")]
    ['Yes. Theft is punished with fine [A].', 'It is cognizable [A].']
    >>> split_answer_units("## Theft\\nTheft is punished [A].")[0]
    AnswerUnit(text='Theft', heading=True)
    """
    units: list[AnswerUnit] = []
    block: list[str] = []

    def flush() -> None:
        if not block:
            return
        joined = normalise_space(" ".join(block))
        block.clear()
        for sentence in split_sentences(joined):
            units.append(AnswerUnit(sentence))

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush()
            continue
        if line[0] == ">":
            line = _QUOTE_MARKER.sub("", line).strip()
        if line[:1] in ("#", "*", "_") and (_HEADING_MARKER.match(line) or _WHOLLY_EMPHASISED.match(line)):
            flush()
            units.append(AnswerUnit(normalise_space(_plain_markdown(_HEADING_MARKER.sub("", line))).rstrip(":"), heading=True))
            continue
        line = _plain_markdown(_LIST_MARKER.sub("", line)).strip()
        if not line:
            continue
        block.append(line)
        if line.endswith(":") and not any(CITATION_GROUP.search(part) for part in block):
            # A lead-in ("The punishments are:", "Based on the evidence:") introduces what follows.
            units.append(AnswerUnit(normalise_space(" ".join(block)).rstrip(":"), heading=True))
            block.clear()
        elif line[-1] in _MAY_FINISH and _FINISHED_LINE.search(line):
            flush()
    flush()
    merged: list[AnswerUnit] = []
    for unit in units:
        if merged and not merged[-1].heading and _BARE_YES_NO.match(merged[-1].text):
            merged[-1] = AnswerUnit(f"{merged[-1].text} {unit.text}", unit.heading)
        else:
            merged.append(unit)
    return merged
