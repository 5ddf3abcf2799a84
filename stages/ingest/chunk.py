"""Chunking: cleaned text to citable chunks with semantic ids and provenance down to page and character.

Each section is split on its own (a chunk never crosses a section boundary) by langchain-text-splitters'
``RecursiveCharacterTextSplitter`` (paragraph, line, word, character), sized in the MiniLM tokenizer's tokens
(``stages.text.model_tokens.count_tokens``). A section that already fits is one chunk without calling the splitter.
Text outside sections (before the first one, or all of a document without any) is cut at page boundaries
first, then split the same way.

Semantic ids: ``<DocCode>_<SectionId>_<n>`` with ``n`` counting the chunks of that section from 0
(``IPC_420_0``); ``<DocCode>_p<page>_<n>`` for text outside any section, ``n`` counting per start page.
Section ids are unique inside a document (``find_sections`` suffixes repeats with ``#2``), so ids are too.
``chunk_id`` is the sha256 of the canonical JSON of ``{"text", "provenance"}`` (not of the semantic id, which
``resolve_id_clashes`` may rename); ``content_sha256`` is the sha256 of the text alone.

A chunk of a ``front_matter`` section (a table of contents, an arrangement of sections) is flagged
``front_matter``, one of an ``exercise`` section (an exercise, an activity, a question box) ``exercise``: neither is
ever evidence (``stages.ingest.flags``).

Invariant: ``doc.text[c.provenance.char_start:c.provenance.char_end] == c.text`` for every chunk.

>>> from contracts.ingest import CleanedDocument, PageSpan
>>> from stages.ingest.extract import make_source_document
>>> from stages.ingest.sections import find_sections
>>> text = "420. Cheating.—Whoever cheats shall be punished."
>>> doc = CleanedDocument(source=make_source_document("ipc.txt", b"x"), text=text,
...     page_spans=(PageSpan(page=1, char_start=0, char_end=len(text), origin="text_file"),),
...     sections=find_sections(text))
>>> [c.semantic_id for c in chunk_document(doc, ChunkConfig()).chunks]
['IPC_420_0']
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

from contracts._base import content_sha256, sha256_text
from contracts.config import ChunkConfig
from contracts.errors import StageInvariantError
from contracts.ingest import Chunk, ChunkProvenance, ChunkSet, CleanedDocument, PageSpan, Section
from stages.ingest.flags import FLAG_OF_LEVEL
from stages.text.model_tokens import count_tokens

__all__ = ["STAGE_VERSION", "chunk_document", "resolve_id_clashes"]

STAGE_VERSION = "chunk.v1"


# Token counts of the strings the splitter and the overlap measure, by string: a document's lines and words
# recur (measured over the statute and NCERT PDFs: 28,778 counts of 8,729 distinct strings), and a count is a
# regex pass over the string.
@lru_cache(maxsize=200_000)
def _count(text: str) -> int:
    return count_tokens(text)


def _split_length(text: str) -> int:
    """Token count, but at least 1 for visible text: characters the tokenizer drops (private-use glyphs in
    PDF formulas) would otherwise weigh 0 and be carried into two neighbouring pieces."""
    n = _count(text)
    return n if n or text.isspace() or not text else 1


@lru_cache(maxsize=8)
def _splitter(chunk_tokens: int):  # -> RecursiveCharacterTextSplitter
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(
        chunk_size=chunk_tokens,
        # Overlap is added afterwards from exact offsets: with overlapping pieces a repeated phrase makes
        # "where does this piece start?" ambiguous; consecutive pieces are found exactly.
        chunk_overlap=0,
        length_function=_split_length,
        separators=["\n\n", "\n", " ", ""],
        keep_separator=True,  # pieces stay exact substrings of the section, so offsets can be found
        strip_whitespace=True,
    )


_WORD_START = re.compile(r"\S+")


def _split(text: str, cfg: ChunkConfig) -> list[tuple[int, int]]:
    """[start, end) offsets inside ``text`` of its chunks, surrounding whitespace excluded.

    The splitter cuts consecutive pieces of at most ``chunk_tokens - overlap`` tokens; each piece after the
    first is then extended back over whole words of its predecessor, up to ``overlap`` tokens.
    """
    stripped = text.strip()
    if not stripped:
        return []
    lead = len(text) - len(text.lstrip())
    # Every token is at least one character and every word at least one token: skip counting when either
    # bound already decides.
    if len(stripped) <= cfg.chunk_tokens or (
        len(stripped.split()) <= cfg.chunk_tokens and count_tokens(stripped) <= cfg.chunk_tokens
    ):
        return [(lead, lead + len(stripped))]
    overlap = min(cfg.overlap_tokens, cfg.chunk_tokens // 2)
    spans: list[tuple[int, int]] = []
    cursor = 0
    for piece in _splitter(cfg.chunk_tokens - overlap).split_text(text):
        piece = piece.strip()
        if not piece:
            continue
        start = text.find(piece, cursor)
        if start < 0 and spans:  # a piece may still repeat the tail of the previous one
            start = text.find(piece, spans[-1][0] + 1)
        if start < 0:
            raise StageInvariantError(f"a split piece was not found in its section text: {piece[:60]!r}")
        spans.append((start, start + len(piece)))
        cursor = start + len(piece)
    if overlap:
        for k in range(1, len(spans)):
            prev_start, start, end = spans[k - 1][0], spans[k][0], spans[k][1]
            new_start = start
            # Counts add up over whitespace-separated segments (pre-tokens never span whitespace), so the
            # overlap grows word by word without recounting what it already holds.
            tokens, seg_end = 0, start
            for word in _words_backwards(text, prev_start, start, overlap):
                tokens += _count(text[word.start() : seg_end])
                if tokens > overlap:
                    break
                new_start = seg_end = word.start()
            spans[k] = (new_start, end)
    return spans


def _words_backwards(text: str, lo: int, hi: int, overlap: int) -> Iterator[re.Match[str]]:
    """The words of ``text[lo:hi]``, last first. An overlap of N tokens needs only the last few words: they are
    looked for in the last ``16 * (N + 1)`` characters first, and in all of ``[lo, hi)`` only if those run out."""
    window = max(lo, hi - 16 * (overlap + 1))
    near = list(_WORD_START.finditer(text, window, hi))
    # A word cut by the window's start is not a word start: leave the window's first match out unless it
    # begins at the window's start after white space (or at lo).
    if window > lo and near and near[0].start() == window and not text[window - 1].isspace():
        near = near[1:]
    yield from reversed(near)
    if window > lo:
        yield from reversed(list(_WORD_START.finditer(text, lo, near[0].start() if near else hi)))


class _PageMap:
    """Cleaned-text offset -> page span, by binary search over the non-empty page spans."""

    def __init__(self, spans: tuple[PageSpan, ...]) -> None:
        self._spans = [s for s in spans if s.char_end > s.char_start]
        self._starts = [s.char_start for s in self._spans]

    def at(self, offset: int) -> PageSpan:
        i = bisect.bisect_right(self._starts, offset) - 1
        return self._spans[max(i, 0)]

    def between(self, start: int, end: int) -> list[PageSpan]:
        first = max(bisect.bisect_right(self._starts, start) - 1, 0)
        last = max(bisect.bisect_right(self._starts, max(end - 1, start)) - 1, 0)
        return self._spans[first : last + 1]


def _by_page(start: int, end: int, page_starts: list[int]) -> list[tuple[int, int, Section | None]]:
    """Text outside sections is cut at page boundaries, so its ``p<page>`` ids name the page exactly."""
    cuts = [start] + [b for b in page_starts if start < b < end] + [end]
    return [(a, b, None) for a, b in zip(cuts, cuts[1:]) if b > a]


def _segments(doc: CleanedDocument, cfg: ChunkConfig) -> list[tuple[int, int, Section | None]]:
    page_starts = sorted({s.char_start for s in doc.page_spans if s.char_end > s.char_start})
    if not cfg.respect_sections or not doc.sections:
        return _by_page(0, len(doc.text), page_starts)
    ordered = sorted(doc.sections, key=lambda s: s.char_start)
    segments: list[tuple[int, int, Section | None]] = []
    cursor = 0
    for section in ordered:
        if section.char_start > cursor:
            segments.extend(_by_page(cursor, section.char_start, page_starts))
        start = max(section.char_start, cursor)
        if section.char_end > start:
            segments.append((start, section.char_end, section))
        cursor = max(cursor, section.char_end)
    if cursor < len(doc.text):
        segments.extend(_by_page(cursor, len(doc.text), page_starts))
    return segments


def chunk_document(doc: CleanedDocument, cfg: ChunkConfig) -> ChunkSet:
    """Split a cleaned document into chunks with semantic ids and full provenance (see the module docstring)."""
    source = doc.source
    pages = _PageMap(doc.page_spans)
    counters: Counter[str] = Counter()
    chunks: list[Chunk] = []
    if not doc.page_spans or not doc.text.strip():
        return ChunkSet(source=source, chunks=())
    for seg_start, seg_end, section in _segments(doc, cfg):
        for rel_start, rel_end in _split(doc.text[seg_start:seg_end], cfg):
            start, end = seg_start + rel_start, seg_start + rel_end
            text = doc.text[start:end]
            spanned = pages.between(start, end)
            first_page = spanned[0]
            key = section.section_id if section is not None else f"p{first_page.page}"
            semantic_id = f"{source.doc_code}_{key}_{counters[key]}"
            counters[key] += 1
            confidences = [s.ocr_confidence for s in spanned if s.ocr_confidence is not None]
            provenance = ChunkProvenance(
                doc_hash=source.sha256, filename=source.filename, doc_code=source.doc_code,
                page=first_page.page, page_end=spanned[-1].page, char_start=start, char_end=end,
                section_id=section.section_id if section is not None else None,
                section_title=section.title if section is not None else None,
                origin=first_page.origin,
                # The weakest page's confidence: a chunk is only as legible as its worst page.
                ocr_confidence=min(confidences) if confidences else None,
                tenant_id=source.tenant_id, project_id=source.project_id,
            )
            chunks.append(
                Chunk(
                    semantic_id=semantic_id,
                    chunk_id=content_sha256({"text": text, "provenance": provenance.model_dump(mode="json")}),
                    content_sha256=sha256_text(text), text=text, provenance=provenance,
                    flags=(FLAG_OF_LEVEL[section.level],) if section is not None and section.level in FLAG_OF_LEVEL
                    else (),
                )
            )
    return ChunkSet(source=source, chunks=tuple(chunks))


def resolve_id_clashes(chunk_set: ChunkSet, taken: frozenset[str]) -> ChunkSet:
    """Rename semantic ids already used by other documents: ``X`` becomes ``X.2`` (or ``.3``... the first free),
    in chunk order, so the result is the same for the same inputs. Each rename is recorded as ``"old->new"``.

    Example: with ``taken={"IPC_420_0"}`` a chunk ``IPC_420_0`` becomes ``IPC_420_0.2`` and ``id_clashes`` gains
    ``"IPC_420_0->IPC_420_0.2"``; chunk ids and texts are unchanged.
    """
    own = {c.semantic_id for c in chunk_set.chunks}
    used = set(taken) | own
    renamed: list[Chunk] = []
    clashes: list[str] = list(chunk_set.id_clashes)
    for chunk in chunk_set.chunks:
        if chunk.semantic_id not in taken:
            renamed.append(chunk)
            continue
        n = 2
        while f"{chunk.semantic_id}.{n}" in used:
            n += 1
        new_id = f"{chunk.semantic_id}.{n}"
        used.add(new_id)
        clashes.append(f"{chunk.semantic_id}->{new_id}")
        renamed.append(chunk.model_copy(update={"semantic_id": new_id}))
    if len(clashes) == len(chunk_set.id_clashes):
        return chunk_set
    return chunk_set.model_copy(update={"chunks": tuple(renamed), "id_clashes": tuple(clashes)})

