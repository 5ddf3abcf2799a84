"""What citebound's MCP tools take and give, and what they do for one tenant: ``search``, ``ask``, ``get_source``,
``list_documents``. Transport-free: ``api/mcp_server.py`` serves them over stdio and at ``/mcp`` of the API.

Each tool is the HTTP route's code path (the same ``Engine`` calls, ``answer_for`` for answers), reshaped into a
flat result an agent can branch on: a refusal is a result (``status: refused`` with its ``reason_code``), an empty
search says why. Arguments are checked strictly (unknown fields, wrong types, out-of-range numbers, control
characters) and a bad one is ``ToolInputError``: the caller's mistake, told in one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from api.models import DocCode, Identifier

__all__ = [
    "ToolInputError",
    "ToolFailure",
    "SearchArgs",
    "AskArgs",
    "GetSourceArgs",
    "ListDocumentsArgs",
    "SearchResult",
    "AskResult",
    "SourceResult",
    "DocumentsResult",
    "Tools",
    "TOOLS",
    "parse_args",
]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _query_text(value: str) -> str:
    # Tabs and newlines are text; NUL and the other control characters are not (they reach hashes and logs).
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters (NUL, ...)")
    if not value.strip():
        raise ValueError("must not be blank")
    return value


Query = Annotated[str, Field(min_length=1, max_length=4000), AfterValidator(_query_text)]


class ToolInputError(ValueError):
    """The caller's arguments are wrong: a tool error the agent can correct."""


class ToolFailure(RuntimeError):
    """The service cannot do it now (a damaged or refused store, nothing of that name): a tool error with its code."""

    def __init__(self, error: str, detail: str | None = None) -> None:
        super().__init__(f"{error}: {detail}" if detail else error)
        self.error, self.detail = error, detail


class _Args(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class SearchArgs(_Args):
    query: Query = Field(description="the question or keywords (1-4000 characters)")
    project_id: Identifier | None = Field(default=None, description="the project (default: the server's project)")
    k: int | None = Field(default=None, ge=1, le=100, description="how many results (default: the project's top_k)")
    doc_codes: list[DocCode] | None = Field(default=None, max_length=20,
                                            description="only these documents (doc codes, e.g. IPC)")
    page_min: int | None = Field(default=None, ge=1, description="only chunks on or after this page")
    page_max: int | None = Field(default=None, ge=1, description="only chunks on or before this page")
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0,
                                         description="drop results whose confidence is below this")


class AskArgs(_Args):
    query: Query = Field(description="the question (1-4000 characters)")
    project_id: Identifier | None = Field(default=None, description="the project (default: the server's project)")
    k: int | None = Field(default=None, ge=1, le=100, description="chunks retrieved (default: the project's top_k)")


class GetSourceArgs(_Args):
    source_id: Identifier = Field(description="a source_id from search or a citation of ask (e.g. IPC_420_0)")


class ListDocumentsArgs(_Args):
    project_id: Identifier | None = Field(default=None, description="only this project (default: all of them)")


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class SearchHit(_Out):
    source_id: str
    snippet: str = Field(description="the chunk's text")
    score: float = Field(description="the fused rank score")
    confidence: float = Field(description="0..1")
    rank: int
    document: str = Field(description="the document's file name")
    doc_code: str
    doc_hash: str
    page: int
    page_end: int
    section_id: str | None = None
    section_title: str | None = None


class SearchResult(_Out):
    status: Literal["found", "empty"]
    reason: Literal["no_documents", "no_match", "filtered_out", "below_threshold"] | None = Field(
        default=None, description="why nothing was found (empty only)")
    message: str | None = None
    query: str
    project_id: str
    k: int
    results: list[SearchHit]


class SuccessorOut(_Out):
    code: str = Field(description="the newer code (e.g. BNS)")
    section: str
    title: str = ""
    source_ids: list[str] = Field(description="its chunks among the answer's sources (empty: not in this project)")
    commencement: str | None = Field(default=None, description="when the newer code came into force (ISO date)")


class CitationOut(_Out):
    source_id: str
    document: str
    doc_hash: str
    chunk_id: str
    page: int
    page_end: int
    section_id: str | None = None
    section_title: str | None = None
    successors: list[SuccessorOut] = Field(default_factory=list,
                                           description="the provisions that replaced this one, by the successor map")


class AskResult(_Out):
    status: Literal["answered", "refused"]
    answer: str = Field(description="the grounded answer, or the refusal sentence")
    reason_code: str | None = Field(default=None, description="why it was refused (refused only)")
    message: str | None = Field(default=None, description="the refusal's reason in words (refused only)")
    answer_status: str = Field(description="the answer contract's status (success, insufficient_context, ...)")
    citations: list[CitationOut]
    related: list[CitationOut] = Field(description="sources retrieved with the answer that it does not cite")
    confidence: float | None = None
    query: str
    project_id: str
    run_id: str | None = None


class PageBoxes(_Out):
    page: int
    boxes: list[list[float]] = Field(description="[x0, y0, x1, y1] in PDF points, origin top-left")


class Highlights(_Out):
    has_page_image: bool
    matched: float
    confident: bool
    pages: list[PageBoxes]


class SourceResult(_Out):
    source_id: str
    text: str
    document: str
    doc_code: str
    doc_hash: str
    page: int
    page_end: int
    section_id: str | None = None
    section_title: str | None = None
    char_start: int
    char_end: int
    origin: str
    flags: list[str]
    previous_source_id: str | None = None
    next_source_id: str | None = None
    highlights: Highlights


class DocumentOut(_Out):
    doc_key: str
    project_id: str
    document: str
    doc_code: str
    doc_sha256: str
    n_pages: int
    n_chunks: int
    n_ocr_pages: int
    quarantined: list[str]


class DocumentsResult(_Out):
    documents: list[DocumentOut]


def parse_args(model: type[_Args], arguments: dict[str, Any] | None) -> Any:
    """Validate a tool's arguments; ToolInputError names every problem (field and what is wrong, never the value)."""
    try:
        return model.model_validate(arguments or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                             for e in exc.errors(include_url=False, include_input=False))
        raise ToolInputError(f"invalid arguments: {problems}"[:2000]) from None


class Tools:
    """The four tools for one caller's tenant, over the API's ``Engine``.

    ``public`` scrubs server paths out of text (``api.app.path_scrubber``); ``db`` records answer runs for the
    tenant as ``POST /rag/query`` does (None over stdio, as for the CLI)."""

    def __init__(self, engine: Any, public: Callable[[str | None], str | None], db: Any = None,
                 default_project: str = "default") -> None:
        self.engine, self.public, self.db, self.default_project = engine, public, db, default_project

    def search(self, tenant: str, args: SearchArgs) -> SearchResult:
        from contracts.errors import ConfigError

        project = args.project_id or self.default_project
        settings: dict[str, object] = {}
        if args.doc_codes:
            settings["doc_codes"] = list(args.doc_codes)
        if args.page_min is not None:
            settings["page_min"] = args.page_min
        if args.page_max is not None:
            settings["page_max"] = args.page_max
        try:
            found = self.engine.retrieve(args.query, tenant=tenant, project=project, k=args.k,
                                         settings=settings or None)
        except ConfigError as exc:
            raise ToolInputError(f"invalid settings: {exc}") from None
        hits = [item for item in found.results if args.min_confidence is None or item.confidence >= args.min_confidence]
        reason, message = None, None
        if not hits:
            reason, message = self._why_empty(tenant, project, bool(settings), bool(found.results))
        return SearchResult(
            status="found" if hits else "empty", reason=reason, message=message, query=args.query,
            project_id=project, k=found.top_k,
            results=[SearchHit(source_id=i.source_id, snippet=i.content_snippet, score=i.score,
                               confidence=i.confidence, rank=i.rank, document=i.metadata.filename,
                               doc_code=i.metadata.doc_code, doc_hash=i.metadata.doc_hash, page=i.metadata.page,
                               page_end=i.metadata.page_end, section_id=i.metadata.section_id,
                               section_title=i.metadata.section_title) for i in hits])

    def _why_empty(self, tenant: str, project: str, filtered: bool, before_threshold: bool) -> tuple[str, str]:
        if before_threshold:
            return "below_threshold", "results were found, but none reached min_confidence"
        if not any(e.project_id == project for e in self.engine.documents(tenant)):
            return "no_documents", f"project {project!r} holds no documents"
        if filtered:
            return "filtered_out", "no chunk matches the doc_codes/page filters"
        return "no_match", "no chunk matches the query"

    def ask(self, tenant: str, args: AskArgs) -> AskResult:
        from api.answers import ApiError, answer_for

        project = args.project_id or self.default_project
        try:
            answer = answer_for(self.engine, self.public, self.db, args.query, tenant=tenant, project=project, k=args.k)
        except ApiError as exc:
            raise ToolFailure(exc.error, exc.detail) from None

        def cite(c: Any) -> CitationOut:
            return CitationOut(source_id=c.source_id, document=c.filename, doc_hash=c.doc_hash, chunk_id=c.chunk_id,
                               page=c.page, page_end=c.page_end, section_id=c.section_id,
                               section_title=c.section_title,
                               successors=[SuccessorOut(code=s.code, section=s.section, title=s.title,
                                                        source_ids=list(s.semantic_ids), commencement=s.commencement)
                                           for s in c.successors])

        grounded = answer.status == "success"
        return AskResult(status="answered" if grounded else "refused", answer=answer.answer,
                         reason_code=None if grounded else answer.reason_code,
                         message=None if grounded else answer.refusal_reason, answer_status=answer.status,
                         citations=[cite(c) for c in answer.citations], related=[cite(c) for c in answer.related],
                         confidence=answer.confidence, query=args.query, project_id=project, run_id=answer.run_id)

    def get_source(self, tenant: str, args: GetSourceArgs) -> SourceResult:
        from api.engine import NotFound

        try:
            chunk = self.engine.source(args.source_id, tenant=tenant)
            before, after = self.engine.neighbours(args.source_id, tenant=tenant)
        except NotFound:
            # The same answer whether another tenant has one by that name or nobody has.
            raise ToolFailure("not_found", f"no source {args.source_id!r}") from None
        prov = chunk.provenance
        found = self.engine.highlights(chunk)
        pages = range(prov.page, prov.page_end + 1)
        highlights = Highlights(
            has_page_image=found is not None, matched=found.matched if found else 0.0,
            confident=found.confident if found else False,
            pages=[PageBoxes(page=p, boxes=[[b.x0, b.y0, b.x1, b.y1] for b in found.on(p)]) for p in pages]
            if found else [])
        return SourceResult(source_id=chunk.semantic_id, text=chunk.text, document=prov.filename,
                            doc_code=prov.doc_code, doc_hash=prov.doc_hash, page=prov.page, page_end=prov.page_end,
                            section_id=prov.section_id, section_title=prov.section_title, char_start=prov.char_start,
                            char_end=prov.char_end, origin=prov.origin, flags=list(chunk.flags),
                            previous_source_id=before, next_source_id=after, highlights=highlights)

    def list_documents(self, tenant: str, args: ListDocumentsArgs) -> DocumentsResult:
        return DocumentsResult(documents=[
            DocumentOut(doc_key=e.doc_key, project_id=e.project_id, document=e.filename, doc_code=e.doc_code,
                        doc_sha256=e.doc_sha256, n_pages=e.n_pages, n_chunks=e.n_chunks, n_ocr_pages=e.n_ocr_pages,
                        quarantined=list(e.quarantined))
            for e in self.engine.documents(tenant) if args.project_id is None or e.project_id == args.project_id])


# name -> (arguments model, result model, method name, description)
TOOLS: dict[str, tuple[type[_Args], type[_Out], str, str]] = {
    "search": (SearchArgs, SearchResult, "search",
               "Retrieve the chunks of this tenant's documents that best match a query, each with its source_id, "
               "text, score, document, page, section and document hash; no answer is composed. An empty result "
               "says why (no_documents, no_match, filtered_out, below_threshold)."),
    "ask": (AskArgs, AskResult, "ask",
            "Answer a question only from this tenant's documents: status 'answered' with citations (document, page, "
            "section, hash) checked by code, or status 'refused' with a reason_code and message. A refusal is a "
            "normal result to branch on, not an error."),
    "get_source": (GetSourceArgs, SourceResult, "get_source",
                   "The full text of one source (a search result's or a citation's source_id) with its page, section, "
                   "the ids of the chunks before and after it, and where its words are on the PDF page."),
    "list_documents": (ListDocumentsArgs, DocumentsResult, "list_documents",
                       "The documents this tenant holds (optionally one project's): file name, doc code, pages, "
                       "chunks, hash."),
}
