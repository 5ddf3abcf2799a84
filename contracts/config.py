"""Stage configs: frozen, hashed into artifact headers and cache keys."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract, content_sha256

__all__ = [
    "ExtractConfig",
    "CleanConfig",
    "ChunkConfig",
    "EmbedConfig",
    "IndexConfig",
    "RetrieveConfig",
    "config_sha256",
]


class ExtractConfig(Contract):
    kind: Literal["extract_config.v2"] = "extract_config.v2"
    ocr_dpi: int = Field(default=300, ge=72, le=600)
    min_text_chars: int = Field(default=25, ge=0)
    """A PDF page with fewer non-space characters than this in its text layer is OCR'd."""
    ocr_lang: str = "eng"
    ocr_other_langs: tuple[str, ...] = ("hin", "urd")
    """Tesseract languages a scanned page is read in again when its reading in ``ocr_lang`` is not language
    (``stages.ingest.legibility``); one whose data is not installed is skipped and named in the file's report."""
    judge_legibility: bool = True
    """Judge each page's text as language (``stages.ingest.page_text``): reverse a shifted font, OCR a text layer
    that is not language in its script's language, leave out what cannot be read. Off: every text layer is kept."""
    ocr_enabled: bool = True
    max_file_bytes: int = Field(default=512 * 1024 * 1024, gt=0)
    max_pages: int = Field(default=20_000, gt=0)


class CleanConfig(Contract):
    kind: Literal["clean_config.v1"] = "clean_config.v1"
    unicode_form: Literal["NFKC", "NFC"] = "NFKC"
    dehyphenate: bool = True
    strip_running_lines: bool = True
    min_repeat_ratio: float = Field(default=0.5, gt=0.0, le=1.0)
    """A line recurring at the top/bottom of at least this share of pages is a running header/footer."""


class ChunkConfig(Contract):
    kind: Literal["chunk_config.v2"] = "chunk_config.v2"
    chunk_tokens: int = Field(default=200, gt=8)
    overlap_tokens: int = Field(default=24, ge=0)
    respect_sections: bool = True


class EmbedConfig(Contract):
    kind: Literal["embed_config.v1"] = "embed_config.v1"
    batch_size: int = Field(default=64, gt=0)
    title_weight: float = Field(default=0.5, ge=0.0, lt=1.0)
    """A chunk with a section title is embedded as normalise((1 - w) * text vector + w * title vector)."""


class IndexConfig(Contract):
    kind: Literal["index_config.v1"] = "index_config.v1"
    index_type: Literal["flat", "hnsw"] = "flat"
    hnsw_m: int = Field(default=32, gt=1)
    hnsw_ef_construction: int = Field(default=80, gt=0)
    hnsw_ef_search: int = Field(default=64, gt=0)
    bm25_title_repeat: int = Field(default=2, ge=0)
    """Extra copies of a chunk's section title in its BM25 document (a title field boost)."""


class RetrieveConfig(Contract):
    kind: Literal["retrieve_config.v2"] = "retrieve_config.v2"
    top_k: int = Field(default=5, gt=0, le=100)
    mode: Literal["hybrid", "dense", "bm25"] = "hybrid"
    rrf_k: int = Field(default=30, gt=0)
    candidate_k: int = Field(default=50, gt=0)
    pack_token_budget: int = Field(default=1500, gt=0)
    doc_codes: tuple[str, ...] = ()
    page_min: int | None = None
    page_max: int | None = None
    dense_weight: float = Field(default=3.0, ge=0.0)
    """Weight of the dense ranking in weighted reciprocal rank fusion (hybrid mode; tuned in bench/retrieval_eval.py)."""
    bm25_weight: float = Field(default=1.0, ge=0.0)
    """Weight of the BM25 ranking in weighted reciprocal rank fusion (hybrid mode)."""
    intent_weight: float = Field(default=0.5, ge=0.0)
    """Fused-score bonus (in units of a rank-1 RRF vote) for a chunk whose wording matches the query's intent."""
    act_weight: float = Field(default=0.5, ge=0.0)
    """Fused-score bonus (in units of a rank-1 RRF vote) for a chunk of an act the query names ("Penal Code")."""
    qualifier_weight: float = Field(default=0.5, ge=0.0)
    """Fused-score penalty (in units of a rank-1 RRF vote) for a provision that qualifies another (an attempt,
    abetment, preparation, conspiracy or presumption) when the query does not ask about that qualifier."""
    long_query_terms: int = Field(default=32, ge=0)
    """When > 0, a query with more keywords than this is a long fact pattern rather than a question: it is
    fused by z-scored scores (CombSUM) instead of ranks, with no intent/act priors (see stages.retrieval.retrieve)."""
    long_query_dense_weight: float = Field(default=1.0, ge=0.0)
    """Weight of the dense z-score against BM25's (1.0) in long-query score fusion; 1.0 = equal, untuned."""
    resolve_section_refs: bool = True
    """Rank the chunks of sections named in the query ("IPC 420", "Article 21") first."""
    rerank: bool = False
    """Hybrid questions: reorder the head of the fused list by ``stages.retrieval.rerank`` (the provision that covers
    the question's qualifiers), take its probability as the confidence and show close provisions side by side; off
    (the default): plain fusion and the retrieve.v4 confidence. An option for statute projects
    (``citebound settings --set rerank=true``): it was fitted on IPC questions only, and it lowers confidence on
    other corpora (NCERT textbook, an OCR'd Minimum Wages Act): see the README."""
    reader_rerank: bool = False
    """Hybrid questions: reorder the first ``Reranker.pool`` fused candidates by the reader's trained reranker
    (``models/reader/reranker``, a cross-encoder trained on the hand-written questions) and take its calibrated
    probability as their confidence; it replaces ``rerank`` for those candidates; section references stay first.
    Off by default: on dev it ordered the head no better than fusion (first candidate right 1,066 vs 1,064 of
    1,791) and, at equal answered precision, gave fewer right answers than the fine-tuned retriever alone
    (``bench/reader_eval.py``; docs, "The reader"). ``citebound settings --set reader_rerank=true`` turns it on."""


class ProjectSettings(Contract):
    """Standing ``key=value`` overrides of RetrieveConfig / GenerationPolicy fields for one (tenant, project).

    Some settings belong to a corpus, not to the code: the fusion weights were tuned on statutes, and on a
    textbook chapter they rank below BM25 alone (README, "Textbook prose"). ``citebound settings --set``
    stores them; every answer for that project applies them before any per-question ``--set``.
    """

    kind: Literal["project_settings.v1"] = "project_settings.v1"
    tenant_id: str
    project_id: str
    overrides: tuple[tuple[str, str], ...] = ()
    """(key, value) pairs, sorted by key; values as given on the command line (JSON-decoded when applied)."""


def config_sha256(cfg: Contract) -> str:
    """The hash of a config as it goes into headers and cache keys."""
    return content_sha256(cfg)
