"""Ingestion hand-offs: a source file, its extracted pages, the cleaned text, and its chunks."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract

__all__ = [
    "MediaType",
    "Origin",
    "SourceDocument",
    "PageText",
    "ExtractedDocument",
    "PageSpan",
    "Section",
    "CleanedDocument",
    "ChunkProvenance",
    "Chunk",
    "ChunkSet",
    "SEMANTIC_ID_PATTERN",
]

MediaType = Literal["application/pdf", "text/plain", "text/markdown", "application/json"]
Origin = Literal["text_layer", "ocr", "text_file", "json_record"]

# Semantic ids are what users and LLMs type inside [brackets]: keep them to a safe alphabet.
SEMANTIC_ID_PATTERN = r"^[A-Za-z0-9_.#-]+$"


class SourceDocument(Contract):
    """One input file as ingested: identity (sha256 of its bytes) plus who owns it."""

    kind: Literal["source_document.v1"] = "source_document.v1"
    path: str
    filename: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size_bytes: int = Field(ge=0)
    media_type: MediaType
    doc_code: str = Field(pattern=SEMANTIC_ID_PATTERN)
    tenant_id: str = Field(min_length=1)
    project_id: str = Field(min_length=1)


class PageText(Contract):
    """The raw text of one page (1-based page number = the PDF's page index + 1)."""

    page: int = Field(ge=1)
    text: str
    origin: Origin
    ocr_confidence: float | None = Field(default=None, ge=0.0, le=100.0)
    section_id: str | None = Field(default=None, pattern=SEMANTIC_ID_PATTERN)
    """Set only for a structured record (origin ``json_record``): the record's own section/article id."""
    section_title: str | None = None


class ExtractedDocument(Contract):
    """Pages as they came out of PyMuPDF / Tesseract / the text or JSON reader."""

    kind: Literal["extracted_document.v2"] = "extracted_document.v2"
    source: SourceDocument
    pages: tuple[PageText, ...]
    warnings: tuple[str, ...] = ()


class PageSpan(Contract):
    """Where one page's cleaned text sits inside ``CleanedDocument.text`` ([char_start, char_end))."""

    page: int = Field(ge=1)
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)
    origin: Origin
    ocr_confidence: float | None = None


class Section(Contract):
    """A recovered structural unit (statute section, article, chapter heading) in cleaned text."""

    section_id: str = Field(pattern=SEMANTIC_ID_PATTERN)
    title: str | None = None
    level: Literal["part", "chapter", "section", "article", "heading", "record", "front_matter", "exercise"] = "section"
    """``front_matter``: an arrangement of sections, a table of contents, an index, a list of figures
    (``stages.ingest.front_matter``); ``exercise``: an exercise set, an activity, an in-text question box
    (``stages.ingest.exercises``); the chunks of either are flagged and never evidence (``stages.ingest.flags``)."""
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)


class CleanedDocument(Contract):
    """Normalised text of a whole document with a map back to pages, and its recovered sections."""

    kind: Literal["cleaned_document.v2"] = "cleaned_document.v2"
    source: SourceDocument
    text: str
    page_spans: tuple[PageSpan, ...]
    sections: tuple[Section, ...] = ()
    removed_lines: tuple[str, ...] = ()


class ChunkProvenance(Contract):
    """Everything needed to show a chunk's source to a person: file, pages, offsets, section, origin."""

    doc_hash: str
    filename: str
    doc_code: str
    page: int = Field(ge=1)
    page_end: int = Field(ge=1)
    char_start: int = Field(ge=0)
    char_end: int = Field(ge=0)
    section_id: str | None = None
    section_title: str | None = None
    origin: Origin
    ocr_confidence: float | None = None
    tenant_id: str
    project_id: str


class Chunk(Contract):
    """A retrievable, citable piece of text.

    ``semantic_id`` is what answers cite (``IPC_420_0``); ``chunk_id`` is the content hash of the
    chunk (text + provenance), ``content_sha256`` the hash of the text alone (the embedding cache key).
    ``flags`` carries ingestion findings: ``injection_suspected`` (``stages.ingest.injection``), ``front_matter``
    (``stages.ingest.front_matter``), ``exercise`` (``stages.ingest.exercises``); a chunk flagged with any of them
    is never evidence (``stages.ingest.flags``).
    """

    semantic_id: str = Field(pattern=SEMANTIC_ID_PATTERN)
    chunk_id: str
    content_sha256: str
    text: str = Field(min_length=1)
    provenance: ChunkProvenance
    flags: tuple[str, ...] = ()


class ChunkSet(Contract):
    """All chunks of one source document."""

    kind: Literal["chunk_set.v1"] = "chunk_set.v1"
    source: SourceDocument
    chunks: tuple[Chunk, ...]
    id_clashes: tuple[str, ...] = ()
