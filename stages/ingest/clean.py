"""Cleaning: normalised text of a whole document, a map back to its pages, and its recovered sections.

Per page: a label drawn in layers (the same line three or more times in a row) kept once, Unicode normalisation (NFKC by default: ligatures such as "ﬁ" become "fi", no-break spaces become
spaces), soft hyphens and zero-width characters dropped, line ends unified, spaces collapsed, blank-line runs
cut to one paragraph break. Across pages: running headers, footers and page numbers are found as lines that
recur (numbers normalised to ``#``) in the top or bottom three lines of at least ``cfg.min_repeat_ratio`` of
the pages (of all pages, or of the odd or the even pages, for books with facing headers), at least three times,
and are removed there (and anywhere on a page for a line with a number and a word, such as "Reprint 2026-27",
which OCR and layered boxes put mid-page; never a line that reads as a heading, a line over 100 characters, or a line of a
page with fewer than three lines); ``removed_lines`` lists the first line removed
under each such pattern (so "49" stands for all page numbers). Words hyphenated across a line break are joined ("employ-\\nment" -> "employment"), keeping
the hyphen when the document itself writes the compound with one elsewhere ("sub-\\nsection" -> "sub-section").

Pages are joined with one newline; ``page_spans[i]`` gives page i's slice of ``text``. Sections come from
``stages.ingest.sections.find_sections``, with front matter (a table of contents, an arrangement of sections, an
index) and a textbook's exercises, activities and question boxes laid over them as sections of level
``front_matter`` (``stages.ingest.front_matter``) and ``exercise`` (``stages.ingest.exercises``), except for JSON statute records, where each record page is one section
(level ``record``) with the record's own id.

>>> from contracts.ingest import ExtractedDocument, PageText
>>> from stages.ingest.extract import make_source_document
>>> src = make_source_document("a.txt", b"x")
>>> doc = ExtractedDocument(source=src, pages=(PageText(page=1, text="The ﬁrst employ-\\nment rule.", origin="text_file"),))
>>> clean_document(doc, CleanConfig()).text
'The first employment rule.'
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict

from contracts.config import CleanConfig
from contracts.ingest import CleanedDocument, ExtractedDocument, PageSpan, PageText, Section
from stages.ingest.exercises import find_exercises
from stages.ingest.front_matter import disjoint, find_front_matter, with_regions
from stages.ingest.sections import find_sections, heading_like

__all__ = ["STAGE_VERSION", "clean_document", "normalise_page_text"]

STAGE_VERSION = "clean.v1"

_ZONE_LINES = 3
_MIN_REPEATS = 3
_MIN_PAGE_LINES = 3
_MAX_RUNNING_LINE_CHARS = 100
# Soft hyphen and zero-width characters, dropped (a regex: str.translate looks every character up in a dict).
_DROP_CHARS = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_DROP = re.compile(f"[{_DROP_CHARS}]+")
# Whitespace (str.isspace) that _SPACES does not collapse and the steps before do not remove: lines holding one
# take the regex path, so the faster one never sees them.
_OTHER_WHITESPACE = ("\x85", "\u1680", "\u2028", "\u2029")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
# A run of spaces becomes one " ". Only runs that are not already exactly " " match: two or more characters, or
# one other space character (no-break, en, thin...), so the common single space costs no replacement.
_SPACE = "[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]"
_SPACES = re.compile(f" {_SPACE}+|[\t\u00a0\u2000-\u200a\u202f\u205f\u3000]{_SPACE}*")
_BLANK_RUNS = re.compile(r"\n{3,}")
_HYPHEN_BREAK = re.compile(r"([A-Za-z]*[a-z])-\n([a-z][A-Za-z]*)")
_INLINE_COMPOUND = re.compile(r"\b([A-Za-z]*[a-z])-([a-z][A-Za-z]*)\b")
_DIGITS = re.compile(r"\d+")
_MIN_OVERLAY_RUN = 3
_MIN_OVERLAY_CHARS = 3


def normalise_page_text(text: str, unicode_form: str = "NFKC") -> str:
    """One page's text with Unicode, control characters, spaces and blank lines normalised.

    >>> normalise_page_text("a\\u00a0 b\\r\\n\\n\\n\\nc\\u00ad d  ")
    'a b\\n\\nc d'
    """
    text = unicodedata.normalize(unicode_form, text)
    if any(ch in text for ch in _DROP_CHARS):  # a substring test is ~50x faster than the regex pass
        text = _DROP.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n").replace("\v", "\n")
    text = _CONTROL.sub("", text)
    if any(ch in text for ch in _OTHER_WHITESPACE):
        lines = [line.strip() for line in _SPACES.sub(" ", text).split("\n")]
    else:
        # The same lines, 10x faster: every whitespace character left in a line is one _SPACES collapses, so
        # splitting at whitespace runs and joining with " " is collapsing them and stripping the ends.
        lines = [" ".join(line.split()) for line in text.split("\n")]
    return _squeeze_blank_runs("\n".join(lines)).strip()


def _collapse_repeats(lines: list[str]) -> list[str]:
    """A run of ``_MIN_OVERLAY_RUN`` or more identical lines (with a letter or digit, ``_MIN_OVERLAY_CHARS``
    characters or more) as one: a label drawn in layers over a figure or a box comes out once per layer ("Activity 1.2" five
    times on jesc101.pdf, "Methods of Enquiry" four times on kepy102.pdf).

    >>> _collapse_repeats(["Activity 1.2"] * 5 + ["1.3"] * 4 + ["Take a test tube.", "No", "No", "No"])
    ['Activity 1.2', '1.3', 'Take a test tube.', 'No', 'No', 'No']
    """
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i + 1
        while j < len(lines) and lines[j] == lines[i]:
            j += 1
        line = lines[i]
        if j - i >= _MIN_OVERLAY_RUN and len(line) >= _MIN_OVERLAY_CHARS and any(ch.isalnum() for ch in line):
            out.append(line)
        else:
            out.extend(lines[i:j])
        i = j
    return out


def _squeeze_blank_runs(text: str) -> str:
    return _BLANK_RUNS.sub("\n\n", text) if "\n\n\n" in text else text


def _line_key(line: str) -> str:
    return _DIGITS.sub("#", line.lower()).strip()


def _is_numbered_furniture(key: str) -> bool:
    """A running line's key with a number and a word of letters, eight characters or more: ``reprint #-#``.

    >>> _is_numbered_furniture("reprint #-#"), _is_numbered_furniture("#"), _is_numbered_furniture("science")
    (True, False, False)
    """
    return len(key) >= 8 and "#" in key and re.search(r"[a-z]{3}", key) is not None


def _zone_indices(lines: list[str]) -> list[int]:
    """Indices of the first and last ``_ZONE_LINES`` non-blank lines (scanned from both ends only)."""
    return sorted(set(_first_filled(range(len(lines)), lines) + _first_filled(range(len(lines) - 1, -1, -1), lines)))


def _first_filled(order: range, lines: list[str]) -> list[int]:
    found: list[int] = []
    for i in order:
        if lines[i].strip():
            found.append(i)
            if len(found) == _ZONE_LINES:
                break
    return found


def _running_line_keys(pages: list[list[str]], ratio: float) -> set[str]:
    """Keys of lines recurring in the top/bottom zones of enough pages (all, odd or even pages)."""
    n_pages = len(pages)
    if n_pages < _MIN_REPEATS:
        return set()
    pages_with_key: dict[str, set[int]] = defaultdict(set)
    for index, lines in enumerate(pages):
        if sum(1 for line in lines if line.strip()) < _MIN_PAGE_LINES:
            continue  # a page of one or two lines is all content, not header + body + footer
        for i in _zone_indices(lines):
            key = _line_key(lines[i])
            if key and len(key) <= _MAX_RUNNING_LINE_CHARS and not heading_like(lines[i]):
                pages_with_key[key].add(index)
    running: set[str] = set()
    for key, found in pages_with_key.items():
        # Pages holding the key among all pages, the odd and the even ones (counted over the few pages found).
        even = sum(1 for i in found if i % 2 == 0)
        for size, hits in ((n_pages, len(found)), ((n_pages + 1) // 2, even), (n_pages // 2, len(found) - even)):
            if size >= _MIN_REPEATS and hits >= _MIN_REPEATS and hits >= ratio * size:
                running.add(key)
                break
    return running


def _dehyphenate(text: str, compounds: set[str]) -> str:
    def join(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        if f"{left}-{right}".lower() in compounds:
            return f"{left}-{right}"
        return left + right

    return _HYPHEN_BREAK.sub(join, text)


def clean_document(doc: ExtractedDocument, cfg: CleanConfig) -> CleanedDocument:
    """Normalise a document's pages into one text with page spans, removed running lines and sections.

    >>> from contracts.ingest import ExtractedDocument, PageText
    >>> from stages.ingest.extract import make_source_document
    >>> bodies = ["Alpha.", "Beta.", "Gamma.", "Delta."]
    >>> pages = tuple(PageText(page=i, text=f"ACT HEADER\\n{b}\\n{b} again.\\n{i}", origin="text_file")
    ...               for i, b in enumerate(bodies, 1))
    >>> out = clean_document(ExtractedDocument(source=make_source_document("a.txt", b"x"), pages=pages), CleanConfig())
    >>> out.text.split("\\n")[:3], out.removed_lines
    (['Alpha.', 'Alpha. again.', 'Beta.'], ('ACT HEADER', '1'))
    """
    page_lines = [_collapse_repeats(normalise_page_text(p.text, cfg.unicode_form).split("\n")) for p in doc.pages]
    removed: dict[str, str] = {}  # key -> first line removed under it
    if cfg.strip_running_lines and not any(p.origin == "json_record" for p in doc.pages):
        running = _running_line_keys(page_lines, cfg.min_repeat_ratio)
        if running:
            # A footer with a number and words ("Reprint 2026-27", "76 | KRITI") is page furniture wherever it
            # lands: OCR and layered boxes put it mid-page.
            anywhere = {key for key in running if _is_numbered_furniture(key)}
            for lines in page_lines:
                zone = set(_zone_indices(lines))
                for i, line in enumerate(lines):
                    key = _line_key(line)
                    if key in running and (i in zone or key in anywhere):
                        removed.setdefault(key, line)
                        lines[i] = ""
    page_texts = [_squeeze_blank_runs("\n".join(lines)).strip() for lines in page_lines]
    if cfg.dehyphenate and any("-\n" in text for text in page_texts):
        # Only a page with a hyphen at a line end has anything to join; the compounds decide how.
        compounds = {
            f"{a}-{b}".lower() for text in page_texts if "-" in text for a, b in _INLINE_COMPOUND.findall(text)
        }
        page_texts = [_dehyphenate(text, compounds) if "-\n" in text else text for text in page_texts]

    parts: list[str] = []
    spans: list[PageSpan] = []
    offset = 0
    for page, text in zip(doc.pages, page_texts, strict=True):
        if text and parts:
            parts.append("\n")
            offset += 1
        spans.append(
            PageSpan(page=page.page, char_start=offset, char_end=offset + len(text), origin=page.origin,
                     ocr_confidence=page.ocr_confidence)
        )
        if text:
            parts.append(text)
            offset += len(text)
    full_text = "".join(parts)

    if doc.pages and all(p.origin == "json_record" for p in doc.pages):
        sections = _record_sections(doc.pages, spans)
    else:
        found = find_sections(full_text)
        regions = disjoint(find_front_matter(full_text), find_exercises(full_text, found))
        sections = with_regions(found, regions)
    return CleanedDocument(
        source=doc.source, text=full_text, page_spans=tuple(spans), sections=sections,
        removed_lines=tuple(removed.values()),
    )


def _record_sections(pages: tuple[PageText, ...], spans: list[PageSpan]) -> tuple[Section, ...]:
    """One section per JSON record page, ids made unique with ``#2``, ``#3``... like ``find_sections``."""
    seen: Counter[str] = Counter()
    sections: list[Section] = []
    for page, span in zip(pages, spans, strict=True):
        if span.char_end <= span.char_start:
            continue
        base = page.section_id or f"p{page.page}"
        seen[base] += 1
        section_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
        sections.append(
            Section(section_id=section_id, title=page.section_title, level="record",
                    char_start=span.char_start, char_end=span.char_end)
        )
    return tuple(sections)
