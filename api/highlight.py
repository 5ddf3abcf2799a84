"""Where a cited chunk sits on its PDF page(s), and the page rendered with those words highlighted (PyMuPDF).

The chunk's words are aligned (difflib, in order) with the words PyMuPDF reads on the chunk's pages
(``page.get_text("words")``), across every page the chunk spans, so a chunk that runs over a page break is
found on both pages. A highlight is placed only when at least ``MIN_MATCHED`` of the chunk's words align;
otherwise none is shown (an OCR'd page has no text layer to align with, and cleaning may have changed a
page's words beyond recognition): a missing highlight is better than one on the wrong words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher

import pymupdf

__all__ = ["Box", "PageHighlights", "find_highlights", "render_page", "MIN_MATCHED"]

MIN_MATCHED = 0.8
# Aligned runs shorter than this are chance matches of common words ("the", "of"), not the chunk.
MIN_RUN = 3
_WORD = re.compile(r"\w+")


def _norm_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


@dataclass(frozen=True)
class Box:
    page: int
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class PageHighlights:
    """Boxes (PDF points) of a chunk's words on each page, and how much of the chunk was found."""

    boxes: tuple[Box, ...]
    matched: float
    confident: bool

    def on(self, page: int) -> tuple[Box, ...]:
        return tuple(b for b in self.boxes if b.page == page) if self.confident else ()


def find_highlights(pdf: bytes, chunk_text: str, first_page: int, last_page: int) -> PageHighlights:
    wanted = _norm_words(chunk_text)
    found: list[str] = []
    where: list[Box] = []
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        for page_no in range(first_page, min(last_page, doc.page_count) + 1):
            for x0, y0, x1, y1, text, *_ in doc[page_no - 1].get_text("words", sort=True):
                for w in _norm_words(text):
                    found.append(w)
                    where.append(Box(page_no, x0, y0, x1, y1))
    if not wanted or not found:
        return PageHighlights((), 0.0, False)
    matcher = SequenceMatcher(None, wanted, found, autojunk=False)
    boxes: list[Box] = []
    matched = 0
    for block in matcher.get_matching_blocks():
        if block.size >= MIN_RUN:
            matched += block.size
            boxes.extend(where[block.b:block.b + block.size])
    share = matched / len(wanted)
    # One box per PDF word (a word like "420." yields one normalised word per box anyway).
    unique = tuple(dict.fromkeys(boxes))
    return PageHighlights(unique, round(share, 3), share >= MIN_MATCHED)


def render_page(pdf: bytes, page_no: int, boxes: tuple[Box, ...], *, dpi: int = 110) -> tuple[bytes, float]:
    """PNG of ``page_no`` with ``boxes`` filled in translucent yellow; also the scale (pixels per point)."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        if not 1 <= page_no <= doc.page_count:
            raise IndexError(page_no)
        page = doc[page_no - 1]
        for b in boxes:
            page.draw_rect(pymupdf.Rect(b.x0, b.y0, b.x1, b.y1), color=None, fill=(1.0, 0.85, 0.0),
                           fill_opacity=0.4, overlay=True)
        pix = page.get_pixmap(dpi=dpi)
        return pix.tobytes("png"), dpi / 72.0
