"""What an index keeps of a chunk besides its vector: the ``IndexRecord`` every backend stores.

One place decides, for every backend, the words BM25 counts for a chunk (its section title repeated
``IndexConfig.bm25_title_repeat`` times, then its text, through ``stages.text.normalise.search_terms``), the
provision kinds and qualifier retrieval's priors read, and the section key a reference such as "IPC 420"
is matched on. FAISS + BM25 (``stages.index.search_index``) computes the same from the same functions; a
Milvus collection stores these records as they are, so its BM25 analyser only splits the stored terms
on spaces and never normalises a word itself (the normaliser stays in ``stages.text``).

>>> from tests.stages.index.test_search_index import make_chunk  # doctest: +SKIP
>>> record = index_record(make_chunk("Whoever commits theft shall be punished", title="Theft"), IndexConfig())  # doctest: +SKIP
>>> record.terms[:2]  # doctest: +SKIP
('theft', 'theft')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contracts.config import IndexConfig
from contracts.index import IndexRecord
from contracts.ingest import Chunk
from stages.retrieval.query_analysis import provision_kinds, qualifier_of
from stages.text.normalise import search_terms

__all__ = ["index_record", "index_records", "lexical_text", "section_key", "EMPTY_DOCUMENT_TERM"]

_SECTION_KEY = re.compile(r"^(?:(section|sec|s|article|art|rule|r|order)[\s_.-]*)?(\d+[a-z]{0,3})$")

EMPTY_DOCUMENT_TERM = "cbemptydocument"
"""The one term of a chunk whose text has no BM25 term at all (only stop words): engines that refuse an empty
document get this instead; no query is ever tokenised to it."""


def section_key(section_id: str, doc_code: str) -> tuple[str, str]:
    """(level, number) of a chunk's section id: ("section", "420") for "420", "IPC_420" or "Section_420".

    >>> assert section_key("IPC_420", "IPC") == ("section", "420") and section_key("Art_21A", "COI") == ("article", "21a")
    """
    key = section_id.strip().lower()
    prefix = doc_code.lower()
    if key.startswith(prefix) and len(key) > len(prefix) and not key[len(prefix)].isalnum():
        key = key[len(prefix) + 1 :]
    match = _SECTION_KEY.match(key.strip("_.- "))
    if not match:
        return ("other", key)
    level = "article" if match.group(1) in ("article", "art") else "section"
    return (level, match.group(2))


def lexical_text(chunk: Chunk, title_repeat: int) -> str:
    """The text BM25 indexes for a chunk: its section title ``title_repeat`` more times, then its text."""
    title = chunk.provenance.section_title
    return f"{(title + ' ') * title_repeat}{chunk.text}" if title else chunk.text


def index_record(chunk: Chunk, cfg: IndexConfig) -> IndexRecord:
    """The record an index keeps for ``chunk`` under ``cfg`` (see the module docstring)."""
    p = chunk.provenance
    level, number = section_key(p.section_id, p.doc_code) if p.section_id else (None, None)
    return IndexRecord(
        chunk=chunk,
        terms=tuple(search_terms(lexical_text(chunk, cfg.bm25_title_repeat))),
        kinds=tuple(sorted(provision_kinds(chunk.text, p.section_title))),
        qualifier=qualifier_of(p.section_title),
        section_level=level,
        section_number=number,
    )


def index_records(chunks: Sequence[Chunk], cfg: IndexConfig) -> tuple[IndexRecord, ...]:
    """``index_record`` of every chunk, in order."""
    return tuple(index_record(c, cfg) for c in chunks)
