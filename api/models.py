"""Request and response bodies of the HTTP API. Answers and retrieval results are the frozen contracts
themselves (``contracts.Answer``, ``contracts.RetrievalResult``): the same JSON as ``citebound ask --json``."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from contracts import Answer, CatalogEntry, Chunk, RetrievalResult

__all__ = [
    "LLMChoice",
    "QueryRequest",
    "QueryResponse",
    "DifyRetrievalSetting",
    "DifyRetrievalRequest",
    "DifyRecord",
    "DifyRetrievalResponse",
    "ErrorBody",
    "DocumentList",
    "UploadReport",
    "SourceView",
    "Health",
    "HighlightView",
    "Identifier",
    "DocCode",
]

SettingValue = str | int | float | bool

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _printable(value: str) -> str:
    """An identifier reaches file names, hashes, SQL and logs: a control character (NUL above all) is refused
    here, as the caller's error, before any of them sees it."""
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters (NUL, tab, newline, ...)")
    return value


# Every identifier a caller sends (tenant and project ids, Dify's knowledge_id, semantic ids and doc names in
# paths): one type, so every route answers a bad one with 422 (/retrieval: Dify's error shape).
Identifier = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(_printable)]
DocCode = Annotated[str, StringConstraints(max_length=64), AfterValidator(_printable)]  # empty: from the file name


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LLMChoice(_Body):
    """The answering backend of one request. ``base_url`` names an OpenAI-compatible server; the API's own
    ``OPENAI_API_KEY`` is sent only to the server the API was configured with, never to one a caller names."""

    backend: Literal["extractive", "openai"] = "extractive"
    model: str | None = Field(default=None, max_length=200)
    base_url: str | None = Field(default=None, max_length=500)


class QueryRequest(_Body):
    query: str = Field(min_length=1, max_length=4000)
    tenant_id: Identifier | None = Field(
        default=None, description="must be the caller's own tenant when given (a key reaches one tenant)")
    project_id: Identifier = "default"
    k: int | None = Field(default=None, gt=0, le=100, description="top-k chunks (default: the project's setting)")
    mode: Literal["answer", "retrieval_only"] = "answer"
    llm: LLMChoice | None = None
    settings: dict[str, SettingValue] | None = Field(
        default=None, description="RetrieveConfig / GenerationPolicy fields for this request only (like ask --set)")


QueryResponse = Annotated[Answer | RetrievalResult, Field(discriminator="kind")]


class DifyRetrievalSetting(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    top_k: int = Field(gt=0, le=100)
    score_threshold: float = Field(default=0.0, ge=0.0, le=1.0)


class DifyRetrievalRequest(BaseModel):
    """Dify's external-knowledge request. ``knowledge_id`` is the project; ``metadata_condition`` filters the
    records by doc_code, filename, section and page with Dify's operators (``api.dify``; an operator citebound
    cannot apply is refused, never ignored). Other unknown fields are accepted."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    knowledge_id: Identifier
    query: str = Field(min_length=1, max_length=4000)
    retrieval_setting: DifyRetrievalSetting
    metadata_condition: dict[str, Any] | None = None


class DifyRecord(_Body):
    content: str
    score: float
    title: str
    metadata: dict[str, str | int | float | None]


class DifyRetrievalResponse(_Body):
    records: list[DifyRecord]


class ErrorBody(_Body):
    error: str
    detail: str | None = None


class DocumentList(_Body):
    documents: list[CatalogEntry]


class UploadReport(_Body):
    """The ingest report of an upload, cut down to the caller's file (paths inside the store are not shown)."""

    filename: str
    status: Literal["ingested", "unchanged", "duplicate", "error"]
    doc_key: str | None = None
    doc_code: str | None = None
    n_pages: int = 0
    n_chunks: int = 0
    quarantined: tuple[str, ...] = ()
    reason: str | None = None
    message: str | None = None
    run_id: str | None = None


class SourceView(_Body):
    """One chunk with its provenance: what a citation points to."""

    semantic_id: str
    chunk: Chunk


class HighlightView(_Body):
    """Where a source's words are on one page of its PDF (PDF points, origin top-left). ``boxes`` is empty
    when fewer than 80% of the chunk's words could be placed (``confident`` false): no highlight then."""

    semantic_id: str
    page: int
    has_page_image: bool
    matched: float
    confident: bool
    boxes: list[tuple[float, float, float, float]]


class Health(_Body):
    ok: bool
    version: str
    store_id: str = Field(description="a hash naming the store this API serves (the CLI uses it to find its API)")
