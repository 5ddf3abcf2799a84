"""Which text a PDF page gets: its text layer as it is, the layer with a shifted font reversed, an OCR reading in
the page's language, or none (the page left out), decided on evidence and reported in one line per finding.

``extract.py`` reads the pages and runs the OCR; this module decides, from texts and PyMuPDF's span dictionary
(plain data), and keeps the record:

* ``layer_verdict(text)``: the layer is language, cannot be judged (few words), or is not language; for a Latin
  layer that is not, the constant shift that reverses it (``stages.ingest.legibility.find_shift``);
* ``unshift_spans(page_dict, offset)``: the page's text rebuilt from its spans (as PyMuPDF's ``get_text("text")``
  lays it out: each line's spans joined, a newline after every line), each span reversed where the reversal makes
  more of its words known, or where its raw form holds control characters (a shifted space is ``\\x03``). A page
  mixes fonts (headings in a sound font) and even sound and broken copies of one font (``fekr102.pdf``), so the
  decision is taken span by span; a span without evidence (a digit, one letter) follows the decided span before
  it on its line in the same font, else stays as it is;
* ``best_reading(candidates)``: of several readings of a page (layer, OCR in one or more languages), the one that
  is language with the most known words, or None;
* ``PageFindings``: what was done to which pages, as report lines (``ExtractedDocument.warnings``).

>>> layer_verdict("The sum of the first n terms of an AP is given by the formula we derive here now.").status
'language'
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from stages.ingest.legibility import (
    SCRIPT_LANGUAGE,
    TESSERACT_LANGUAGE,
    Legibility,
    find_shift,
    is_language,
    common_words,
    known_words,
    legibility,
    unshift,
)

__all__ = [
    "LayerVerdict",
    "layer_verdict",
    "unshift_spans",
    "Reading",
    "best_reading",
    "reading_fit",
    "ShiftedPage",
    "MIN_OCR_CONFIDENCE",
    "SURE_OCR_CONFIDENCE",
    "ocr_language_for",
    "PageFindings",
    "page_ranges",
]

_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
MIN_OCR_CONFIDENCE = 60.0
SURE_OCR_CONFIDENCE = 85.0
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


@dataclass(frozen=True)
class LayerVerdict:
    """What a page's text layer is: ``language``, ``unjudged`` (too few words, or a script without a word list),
    or ``not_language``; ``shift`` the offset that reverses it, when one was found."""

    status: Literal["language", "unjudged", "not_language"]
    measure: Legibility
    shift: int | None = None


def layer_verdict(text: str) -> LayerVerdict:
    """Judge one page's text layer (see the module docstring)."""
    measure = legibility(text)
    judged = is_language(measure)
    if judged is None:
        return LayerVerdict("unjudged", measure)
    if judged:
        return LayerVerdict("language", measure)
    shift = find_shift(text) if measure.script == "latin" else None
    return LayerVerdict("not_language", measure, shift)


def ocr_language_for(script: str) -> str | None:
    """Tesseract's language for a script's language (``devanagari`` -> ``hin``), or None.

    >>> ocr_language_for("devanagari"), ocr_language_for("tamil")
    ('hin', None)
    """
    language = SCRIPT_LANGUAGE.get(script)
    return TESSERACT_LANGUAGE.get(language) if language else None


def _known(text: str) -> int:
    """Common English words (``common_words``: three letters or more) in a text."""
    known = common_words("en")
    return sum(1 for w in _LATIN_WORD.findall(text) if w.lower() in known)


def _span_choice(raw: str, offset: int) -> bool | None:
    """True: reverse this span; False: keep it; None: no evidence either way. Evidence is known words, less one
    for every control character (no language writes one; a shifted space is ``\\x03``)."""
    if not _CONTROL.search(raw) and not any(ch.isalpha() for ch in raw):
        return False  # digits and signs alone ("11"): nothing shows a shift, and "11" would become "NN"
    moved = unshift(raw, offset)
    as_is = _known(raw) - len(_CONTROL.findall(raw))
    reversed_ = _known(moved) - len(_CONTROL.findall(moved))
    if reversed_ == as_is:
        return None
    return reversed_ > as_is


@dataclass(frozen=True)
class ShiftedPage:
    """A page's text with its shifted spans reversed, and how the reversed spans read: their words (three letters
    or more) and how many of them the language's word list knows. A wrong offset gains a few words by chance; the right one makes
    the reversed spans read as language (``reversed_share``)."""

    text: str
    reversed_words: int
    reversed_known: int

    @property
    def reversed_share(self) -> float:
        return self.reversed_known / self.reversed_words if self.reversed_words else 0.0


def unshift_spans(page_dict: Mapping[str, Any], offset: int) -> ShiftedPage:
    """The page's text with its shifted spans reversed (see the module docstring).

    >>> line = {"spans": [{"font": "Demi", "text": "Organic "}, {"font": "Light", "text": "WKH\\x03VXP\\x03"},
    ...                   {"font": "Light", "text": "\\x15"}]}
    >>> page = unshift_spans({"blocks": [{"type": 0, "lines": [line]}]}, 29)
    >>> page.text, page.reversed_share
    ('Organic the sum 2\\n', 1.0)
    """
    out: list[str] = []
    words = known = 0
    listed = known_words("en")
    for block in page_dict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            last_choice: dict[str, bool] = {}  # font -> the last decided span's choice on this line
            for span in line.get("spans", ()):
                raw = span.get("text", "")
                choice = _span_choice(raw, offset)
                font = span.get("font", "")
                if choice is None:
                    choice = last_choice.get(font, False)
                else:
                    last_choice[font] = choice
                if choice:
                    moved = unshift(raw, offset)
                    reversed_words = [w.lower() for w in _LATIN_WORD.findall(moved) if len(w) >= 3]
                    words += len(reversed_words)
                    known += sum(1 for w in reversed_words if w in listed)
                    out.append(moved)
                else:
                    out.append(raw)
            out.append("\n")
    return ShiftedPage("".join(out), words, known)


@dataclass(frozen=True)
class Reading:
    """One candidate text of a page: where it came from (``layer``, ``shifted_layer``, ``ocr``), in which
    Tesseract language if OCR'd, its OCR confidence, and its measure."""

    source: Literal["layer", "shifted_layer", "ocr"]
    text: str
    measure: Legibility
    lang: str | None = None
    confidence: float | None = None


def reading_fit(reading: Reading) -> bool | None:
    """Whether a reading of a page is language: its words are (``is_language``), and an OCR reading was read with
    a mean confidence of at least ``MIN_OCR_CONFIDENCE`` (Tesseract's English reads a Hindi page at 33 with 87% of
    its short "words" in the English list; a sound page reads at 90 or more). An OCR reading at
    ``SURE_OCR_CONFIDENCE`` or more with neither control characters nor foreign letters is language even where
    few of its words are listed (song lyrics transliterated into Latin letters). None: too few words to tell.

    >>> leg = legibility("Thinthaadhi Thinthom Thakathinthom Thinthium Thomdana Bommi Thullidum Avan Paatu Illaadha")
    >>> reading_fit(Reading("ocr", "", leg, "eng", 93.0)), reading_fit(Reading("layer", "", leg))
    (None, None)
    """
    judged = is_language(reading.measure)
    if judged is None:
        return None
    confidence = reading.confidence
    if reading.source == "ocr" and confidence is not None:
        if confidence < MIN_OCR_CONFIDENCE:
            return False
        if (not judged and confidence >= SURE_OCR_CONFIDENCE and not reading.measure.control_chars
                and not reading.measure.foreign_letters):
            return True
    return judged


def best_reading(candidates: Iterable[Reading]) -> Reading | None:
    """The candidate that is language (``reading_fit``) with the most known words; None when none is.

    >>> good = Reading("ocr", "x", legibility("the sum of the first terms is given by the formula for the sum here"))
    >>> bad = Reading("layer", "y", legibility("WKH VXP RI WKH ILUVW WHUPV LV JLYHQ E\\\\ WKH IRUPXOD IRU WKH"))
    >>> best_reading([bad, good]).source, best_reading([bad])
    ('ocr', None)
    """
    fit = [c for c in candidates if reading_fit(c)]
    return max(fit, key=lambda c: (c.measure.known, c.measure.known_share)) if fit else None


def page_ranges(numbers: Sequence[int], limit: int = 12) -> str:
    """Page numbers as ranges: ``[1, 2, 3, 7]`` -> ``"1-3, 7"``.

    >>> page_ranges([1, 2, 3, 7, 9, 10])
    '1-3, 7, 9-10'
    """
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs]
    shown = ", ".join(parts[:limit])
    return shown + (f" and {len(parts) - limit} more" if len(parts) > limit else "")


class PageFindings:
    """What was found on which pages of one file, kept by kind and said as one line per kind (``lines()``).

    >>> f = PageFindings()
    >>> f.blank(3); f.blank(4)
    >>> f.lines()
    ('2 blank page(s) (nothing drawn on them): 3-4',)
    """

    def __init__(self) -> None:
        self._pages: dict[tuple[str, str], list[int]] = defaultdict(list)
        self._before: dict[tuple[str, str], list[Legibility]] = defaultdict(list)
        self._after: dict[tuple[str, str], list[Legibility]] = defaultdict(list)
        self.last_shift: int | None = None
        """The offset the last reversed page of this file showed."""

    def _add(self, kind: str, detail: str, page: int, before: Legibility | None = None,
             after: Legibility | None = None) -> None:
        key = (kind, detail)
        self._pages[key].append(page)
        if before is not None:
            self._before[key].append(before)
        if after is not None:
            self._after[key].append(after)

    def blank(self, page: int) -> None:
        self._add("blank", "", page)

    def shifted(self, page: int, offset: int, before: Legibility, after: Legibility) -> None:
        self._add("shifted", str(offset), page, before, after)
        self.last_shift = offset

    def ocr_instead(self, page: int, lang: str, before: Legibility, after: Legibility) -> None:
        self._add("ocr_instead", lang, page, before, after)

    def ocr_language(self, page: int, lang: str, after: Legibility) -> None:
        self._add("ocr_language", lang, page, None, after)

    def kept_layer(self, page: int, measure: Legibility) -> None:
        self._add("kept_layer", "", page, measure)

    def left_out(self, page: int, why: str, before: Legibility | None = None) -> None:
        self._add("left_out", why, page, before)

    @property
    def left_out_pages(self) -> tuple[int, ...]:
        return tuple(sorted(p for (kind, _), pages in self._pages.items() if kind == "left_out" for p in pages))

    @property
    def blank_pages(self) -> tuple[int, ...]:
        return tuple(sorted(self._pages.get(("blank", ""), ())))

    def lines(self) -> tuple[str, ...]:
        """One line per kind of finding, in a fixed order (shifted, OCR instead, OCR language, left out, blank)."""
        order = {"shifted": 0, "ocr_instead": 1, "ocr_language": 2, "kept_layer": 3, "left_out": 4, "blank": 5}
        out: list[str] = []
        for kind, detail in sorted(self._pages, key=lambda k: (order[k[0]], k[1])):
            pages = self._pages[(kind, detail)]
            where = page_ranges(pages)
            before = _share(self._before.get((kind, detail), ()))
            after = _share(self._after.get((kind, detail), ()))
            n = len(pages)
            if kind == "shifted":
                out.append(f"{n} page(s) in a font whose character codes are {abs(int(detail))} "
                           f"{'below' if int(detail) > 0 else 'above'} the letters it draws (a broken character map): "
                           f"reversed, {after} of words known after, {before} before: {where}")
            elif kind == "ocr_instead":
                out.append(f"{n} page(s) whose text layer is not language ({before} of words known): read by OCR "
                           f"({detail}) instead, {after} known: {where}")
            elif kind == "ocr_language":
                out.append(f"{n} scanned page(s) read by OCR in {detail} (not English): {after} of words known: {where}")
            elif kind == "kept_layer":
                out.append(f"{n} page(s) whose text layer holds stray letters or control codes ({before} of words known):"
                           f" kept, OCR read them no better: {where}")
            elif kind == "left_out":
                known = f" ({before} of words known)" if before != "-" else ""
                out.append(f"{n} page(s) left out: {detail}{known}: {where}")
            else:
                out.append(f"{n} blank page(s) (nothing drawn on them): {where}")
        return tuple(out)


def _share(measures: Sequence[Legibility]) -> str:
    words = sum(m.words for m in measures)
    return f"{sum(m.known for m in measures) / words:.0%}" if words else "-"
