"""Legibility: whether a page's extracted text is language, and the one repair a text layer allows by itself.

A PDF's text layer is what its fonts' character maps say, not what the page shows. Two failures occur in the
NCERT library and are silent without this module: a font whose map is off by a constant (``kech202.pdf``:
"WKH" for "the", every code point 29 below the letter it draws, so every letter reads three places on in the
alphabet with its case swapped), and legacy Devanagari fonts whose conjuncts come out as other scripts' letters or
doubled vowels (``lehh*.pdf``: "्ቚथाओं" for "प्रथाओं"). Both were chunked, embedded and searched as if they were text.

``legibility(text)`` measures a text against the word list of its script's language (``wordfreq``'s lists for
English, Hindi and Urdu): the share of its words (two letters or more) that the list knows, the control characters
(which no language writes) and the letters of a script foreign to the page's own (Ethiopic inside Devanagari). A
text is language (``is_language``) when the share reaches the language's floor, measured over the 4,625 pages of the
NCERT library (``docs/TEXT_QUALITY.md``): 4,333 of its 4,374 English pages of 20 words or more have 60% or more
of their words known; the 41 below are 37 of kech202's shifted pages (28-53%), 3 pages with shifted spans and one
word list (59.7%). The 81 legacy Devanagari text layers of 20 words or more have 32-83% known, where Tesseract's
Hindi reads the same pages at 95%.

``find_shift(text)`` looks for the constant: the offset that turns most unknown words into known ones, with at
least ``MIN_SHIFT_EVIDENCE`` words of evidence; ``unshift(text, offset)`` applies it. The shift is reversible
because it is constant: every character moves by the same offset, and a letter that would move out of printable
ASCII (a small capital drawn from the lower-case glyphs) stays the letter it is, in capitals.

>>> unshift("WKH VXP", 29)
'the sum'
>>> find_shift("IQ WKH SUHYLRXV XQLW \\\\RX KDYH OHDUQW WKDW WKH HOHPHQW FDUERQ KDV WKH XQLTXH SURSHUW\\\\")
29
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "Legibility",
    "legibility",
    "is_language",
    "dominant_script",
    "find_shift",
    "unshift",
    "SCRIPT_LANGUAGE",
    "TESSERACT_LANGUAGE",
    "LANGUAGE_FLOOR",
    "MIN_JUDGED_WORDS",
    "MIN_SHIFT_EVIDENCE",
    "known_words",
    "common_words",
]

SCRIPT_LANGUAGE = {"latin": "en", "devanagari": "hi", "arabic": "ur"}
"""The language a page in a script is read as (the library's: English, Hindi, Urdu)."""
TESSERACT_LANGUAGE = {"en": "eng", "hi": "hin", "ur": "urd"}
"""Tesseract's name for each language's trained data (Debian: ``tesseract-ocr-<name>``)."""
LANGUAGE_FLOOR = {"en": 0.6, "hi": 0.85, "ur": 0.85}
"""The least share of known words a page of that language has when its text is language (see the docstring)."""
MIN_JUDGED_WORDS = 12
"""A text with fewer words than this is not judged (a figure's labels, a formula, a page number): it is kept."""
MIN_SHIFT_EVIDENCE = 5
"""Unknown words a shift must make known before it is believed."""
_MAX_CONTROL_SHARE = 0.01
_MAX_FOREIGN_SHARE = 0.005
_AROUND_WORDS = " !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" + "".join(map(chr, range(0x20)))
_MIN_SHIFT_SHARE = 0.4  # of a text's distinct unknown words, the least a shift must make known
_SHIFTS = tuple(k for k in range(-64, 65) if k)

_WORD = {
    "latin": re.compile(r"[A-Za-z]{2,}"),
    # Devanagari letters, signs and vowel marks (not its danda or digits), joiners inside a word.
    "devanagari": re.compile(r"[\u0900-\u0963\u0971-\u097f\u200c\u200d]{2,}"),
    "arabic": re.compile(r"[\u0600-\u065f\u066e-\u06d3\u06d5-\u06ff\u200c]{2,}"),
}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_LIBRARY_SCRIPTS = frozenset({"latin", "greek", "devanagari", "arabic"})


@dataclass(frozen=True)
class Legibility:
    """How a text reads: its script, its language, its words and how many the language's word list knows."""

    script: str
    language: str | None
    words: int
    known: int
    control_chars: int
    foreign_letters: int
    letters: int

    @property
    def known_share(self) -> float:
        return self.known / self.words if self.words else 0.0

    def describe(self) -> str:
        """``"38% of 352 words known"`` (for a report line)."""
        return f"{self.known_share:.0%} of {self.words} words known"


def _script_of(ch: str) -> str:
    code = ord(ch)
    if code < 0x250:
        return "latin"
    if 0x900 <= code <= 0x97F:
        return "devanagari"
    if 0x600 <= code <= 0x6FF or 0x750 <= code <= 0x77F or 0xFB50 <= code <= 0xFEFF:
        return "arabic"
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0].lower() or "other"


def _letter_scripts(text: str) -> Counter[str]:
    return Counter(_script_of(ch) for ch in text if ch.isalpha())


def dominant_script(text: str) -> str:
    """The script most of a text's letters are written in (``latin``, ``devanagari``, ``arabic``, another
    Unicode script name in lower case), or ``none`` for a text without letters.

    >>> dominant_script("हमारा जीवन"), dominant_script("the sum"), dominant_script("12 + 3")
    ('devanagari', 'latin', 'none')
    """
    scripts = _letter_scripts(text)
    return scripts.most_common(1)[0][0] if scripts else "none"


@lru_cache(maxsize=4)
def known_words(language: str) -> frozenset[str]:
    """The words ``wordfreq`` lists for a language (``en``, ``hi``, ``ur``), read once per process."""
    from wordfreq import get_frequency_dict

    return frozenset(get_frequency_dict(language))


@lru_cache(maxsize=4)
def common_words(language: str) -> frozenset[str]:
    """Words of three letters or more that occur at least once in a million words of the language (Zipf 3): the
    evidence a shift must produce. The full list also holds short and rare strings ("lnp", "pt", "nlt") that a
    wrong offset makes out of garbage by chance."""
    from wordfreq import get_frequency_dict

    return frozenset(w for w, f in get_frequency_dict(language).items() if f >= 1e-6 and len(w) >= 3)


def legibility(text: str) -> Legibility:
    """Measure a text against its dominant script's language (see the module docstring).

    >>> leg = legibility("The sum of the first n terms of an AP is given by this formula.")
    >>> (leg.script, leg.language, leg.words, leg.known)
    ('latin', 'en', 14, 14)
    """
    text = unicodedata.normalize("NFC", text)
    scripts = _letter_scripts(text)
    script = scripts.most_common(1)[0][0] if scripts else "none"
    language = SCRIPT_LANGUAGE.get(script)
    letters = sum(scripts.values())
    # Letters of a script that does not write this page's language: "्ቚ" (Ethiopic) for a Devanagari conjunct, a
    # glyph id read as a Samaritan or Mandaic letter. The library's own scripts are not counted: Latin units and
    # names, Greek symbols (α, λ, π), a Hindi or Urdu word quoted in an English page.
    foreign = sum(n for s, n in scripts.items() if s != script and s not in _LIBRARY_SCRIPTS)
    controls = len(_CONTROL.findall(text))
    if language is None:
        return Legibility(script, None, 0, 0, controls, foreign, letters)
    words = _WORD[script].findall(text)
    known = known_words(language)
    hits = sum(1 for w in words if w.lower() in known)
    return Legibility(script, language, len(words), hits, controls, foreign, letters)


def is_language(leg: Legibility) -> bool | None:
    """True when a measured text reads as its language, False when it does not, None when it cannot be judged
    (too few words, or a script without a word list here).

    >>> is_language(legibility("WKH VXP RI WKH ILUVW Q WHUPV RI DQ DS LV JLYHQ E\\\\ WKLV IRUPXOD"))
    False
    """
    if leg.language is None or leg.words < MIN_JUDGED_WORDS:
        return None
    if leg.control_chars > max(2, _MAX_CONTROL_SHARE * leg.letters):
        return False
    if leg.foreign_letters > max(2, _MAX_FOREIGN_SHARE * leg.letters):
        return False
    return leg.known_share >= LANGUAGE_FLOOR[leg.language]


def unshift(text: str, offset: int) -> str:
    """Every character but white space moved by ``offset`` code points. A character that would leave printable
    ASCII stays where it is, except a lower-case letter, which becomes its capital: in the broken fonts seen, small
    capitals keep the lower-case letter's code while everything else moves.

    >>> unshift("tKH\\x03fXQG\\x11", 29)
    'The Fund.'
    """
    out: list[str] = []
    for ch in text:
        if ch in " \n\t\r":
            out.append(ch)
            continue
        moved = ord(ch) + offset
        if 0x20 <= moved < 0x7E:
            out.append(chr(moved))
        elif "a" <= ch <= "z":
            out.append(ch.upper())
        else:
            out.append(ch)
    return "".join(out)


def find_shift(text: str) -> int | None:
    """The constant offset that makes the most of a text's distinct unknown Latin-looking words known English
    words (``common_words``), if it makes at least ``MIN_SHIFT_EVIDENCE`` and 40% of them known; else None. A page may mix sound and
    shifted text: what the shift does to the sound words is not counted here (``page_text.unshift_spans``
    decides span by span).

    >>> find_shift("the sum of the first terms") is None
    True
    """
    tokens = re.findall(r"[\x03-\x08\x0e-\x1f\x21-\x7d]{2,}", text)
    known = known_words("en")
    unknown = [t for t in dict.fromkeys(tokens) if _clean_word(t) not in known]
    known = common_words("en")
    if len(unknown) < MIN_SHIFT_EVIDENCE:
        return None
    best, best_score = None, (0, 0)
    for k in _SHIFTS:
        decoded = [unshift(t, k) for t in unknown]
        gained = sum(1 for t in decoded if _clean_word(t) in known)  # ("" is not in it)
        if gained < max(MIN_SHIFT_EVIDENCE, _MIN_SHIFT_SHARE * len(unknown)):
            continue
        # Equal gains: the offset that gives lower-case prose ("the", not "THE" three letters back in capitals).
        score = (gained, sum(ch.islower() for t in decoded for ch in t))
        if score > best_score:
            best, best_score = k, score
    return best


def _clean_word(token: str) -> str:
    """A shifted token as a word: lower-cased, without the punctuation around it ("Sum," -> "sum"); empty unless
    what is left is two letters or more ("CH2", "`e" and "7HAT" are no words)."""
    core = token.strip(_AROUND_WORDS)
    return core.lower() if len(core) >= 2 and core.isascii() and core.isalpha() else ""
