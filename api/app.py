"""The FastAPI application: ``create_app(ApiConfig) -> FastAPI``; ``citebound api`` serves it with uvicorn.

Routes: ``POST /rag/query``, ``POST /retrieval`` (Dify's external-knowledge API), ``GET /sources/{id}``,
``POST/GET /documents``, ``DELETE /documents/{doc}``, ``GET /health``; OpenAPI at ``/docs``; the MCP tools
(``api/mcp_server.py``, streamable HTTP) at ``/mcp``.

Handlers are plain ``def``s: FastAPI runs them in its thread pool, so a slow LLM behind one request does not
hold up another. Each request carries its own settings (k, settings, llm) down to the flow as parameters;
nothing is read from or written to the process environment per request.
"""

# No `from __future__ import annotations`: FastAPI resolves the handlers' annotations, some of them local.

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import Depends, FastAPI, File, Form, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from api.auth import Authenticator, Caller, KeyAuthenticator, OpenAuthenticator, RateLimiter
from api.client import store_id
from api.db import Database
from api.dify import OVERFETCH, UnsupportedCondition, compile_condition, dify_error_code
from api.engine import Engine, EngineConfig, NotFound, QuotaExceeded
from api.answers import ApiError, answer_for, path_scrubber
from api.mcp_server import McpEndpoint
from api.mcp_tools import Tools
from api.models import (
    DifyRecord,
    DifyRetrievalRequest,
    DifyRetrievalResponse,
    DocCode,
    DocumentList,
    ErrorBody,
    Health,
    HighlightView,
    Identifier,
    QueryRequest,
    QueryResponse,
    SourceView,
    UploadReport,
)
from contracts.errors import (
    ArtifactCorruptError,
    ArtifactNotFoundError,
    CiteboundError,
    ConfigError,
    DocumentDamagedError,
    IndexMismatchError,
    StorageError,
)

__all__ = ["ApiConfig", "create_app", "ApiError", "answer_for", "path_scrubber"]

VERSION = "1"
@dataclass(frozen=True)
class ApiConfig:
    store_root: Path
    embedder: str = "minilm"
    llm_hosts: frozenset[str] = field(default_factory=frozenset)
    max_body_bytes: int = 64 * 1024
    max_upload_bytes: int = 50 * 1024 * 1024
    # Keys, the document registry and the run index; None = keyless local mode (OpenAuthenticator).
    db: Database | None = None
    rate_per_minute: float = 600.0
    authenticator: Authenticator | None = None
    # Where uploads put the index (CITEBOUND_INDEX_URI, resolved by the CLI): None = FAISS in the store.
    index_uri: str | None = None
    # Per tenant: bytes of stored source files and documents (0 = no limit); CITEBOUND_QUOTA_* for `citebound api`.
    quota_bytes: int = 0
    quota_documents: int = 0


def _error(status: int, error: str, detail: str | None = None) -> JSONResponse:
    return JSONResponse(ErrorBody(error=error, detail=detail).model_dump(), status_code=status)


def create_app(cfg: ApiConfig) -> FastAPI:
    engine = Engine(EngineConfig(store_root=cfg.store_root, embedder=cfg.embedder, llm_hosts=cfg.llm_hosts,
                                 index_uri=cfg.index_uri, quota_bytes=cfg.quota_bytes,
                                 quota_documents=cfg.quota_documents))
    public = path_scrubber(cfg.store_root)
    db = cfg.db
    auth = cfg.authenticator or (KeyAuthenticator(db, RateLimiter(cfg.rate_per_minute)) if db else OpenAuthenticator())
    def mcp_caller(request: Request) -> Caller | JSONResponse:
        result = auth.authenticate(request.headers.get("authorization"), path=request.url.path)
        return result if isinstance(result, Caller) else _error(*result)

    # The MCP tools at /mcp (streamable HTTP): the same engine, the same key -> tenant, the same answers.
    mcp = McpEndpoint(Tools(engine, public, db), mcp_caller, loopback_only=isinstance(auth, OpenAuthenticator))
    app = FastAPI(title="citebound", version=VERSION, lifespan=mcp.lifespan,
                  description="Grounded answers from your documents, each claim citing a checked chunk; "
                              "refusals carry a reason code. MCP tools (streamable HTTP) at /mcp.")
    app.router.routes.append(Route("/mcp", mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    app.state.engine = engine
    app.state.auth = auth

    # ------------------------------------------------------------------ errors and limits

    def respond(request: Request, status: int, error: str, detail: str | None = None) -> JSONResponse:
        """Every error: ``{error, detail}``, or on /retrieval Dify's ``{error_code, error_msg}`` (``api.dify``);
        never a server path."""
        detail = public(detail)
        if request.url.path == "/retrieval":
            return JSONResponse({"error_code": dify_error_code(status, error), "error_msg": detail or error},
                                status_code=status)
        return _error(status, error, detail)

    @app.exception_handler(ApiError)
    def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return respond(request, exc.status, exc.error, exc.detail)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
        # Dify expects a 4xx it shows as is; elsewhere FastAPI's 422.
        return respond(request, 400 if request.url.path == "/retrieval" else 422, "invalid_request", problems[:2000])

    @app.exception_handler(StarletteHTTPException)
    def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return respond(request, exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(QuotaExceeded)
    def _quota(request: Request, exc: QuotaExceeded) -> JSONResponse:
        return respond(request, exc.status, exc.error, exc.detail)

    # A damaged store or a refused disk is the service's trouble, told as such (503/507), never as a 500, and
    # only to the requests that need what is damaged (flows/index_views.py).
    @app.exception_handler(DocumentDamagedError)
    def _damaged(request: Request, exc: DocumentDamagedError) -> JSONResponse:
        return respond(request, 503, "document_damaged", str(exc))

    @app.exception_handler(ArtifactCorruptError)
    def _corrupt(request: Request, exc: ArtifactCorruptError) -> JSONResponse:
        return respond(request, 503, "store_damaged", f"{exc}; the operator should run `citebound fsck`")

    @app.exception_handler(ArtifactNotFoundError)
    def _missing(request: Request, exc: ArtifactNotFoundError) -> JSONResponse:
        return respond(request, 503, "store_damaged", f"{exc}; the operator should run `citebound fsck`")

    @app.exception_handler(IndexMismatchError)
    def _mismatch(request: Request, exc: IndexMismatchError) -> JSONResponse:
        return respond(request, 503, "index_mismatch", str(exc))

    @app.exception_handler(StorageError)
    def _storage(request: Request, exc: StorageError) -> JSONResponse:
        return respond(request, 507 if exc.no_space else 503, "storage_unavailable", str(exc))

    @app.exception_handler(Exception)
    def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Never a traceback to the caller; the type names the failure for whoever reads the logs.
        return respond(request, 500, "internal_error", type(exc).__name__)

    @app.middleware("http")
    async def _limit_body(request: Request, call_next):  # noqa: ANN001, ANN202
        if request.method in ("POST", "PUT", "PATCH"):
            limit = cfg.max_upload_bytes if request.url.path == "/documents" else cfg.max_body_bytes
            length = request.headers.get("content-length")
            if length is None:
                return respond(request, 411, "length_required", "send a Content-Length header")
            if not length.isdigit() or int(length) > limit:
                return respond(request, 413, "request_too_large", f"at most {limit} bytes on {request.url.path}")
        return await call_next(request)

    def caller(request: Request) -> Caller:
        result = auth.authenticate(request.headers.get("authorization"), path=request.url.path)
        if isinstance(result, Caller):
            return result
        status, error, detail = result
        raise ApiError(status, error, detail)

    Authed = Annotated[Caller, Depends(caller)]

    def tenant_of(who: Caller, asked: str | None) -> str:
        if who.open:
            return asked or who.tenant
        if asked is not None and asked != who.tenant:
            # Same answer whether or not that tenant exists.
            raise ApiError(403, "forbidden", "this key does not reach that tenant")
        return who.tenant

    # ------------------------------------------------------------------ routes

    page_html = (Path(__file__).resolve().parent / "static" / "index.html").read_text(encoding="utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def web_page() -> HTMLResponse:
        # One static page, no build step: it calls the routes below with the key the reader enters.
        return HTMLResponse(page_html)

    @app.get("/health", response_model=Health)
    def health() -> Health:
        return Health(ok=True, version=VERSION, store_id=store_id(cfg.store_root))

    @app.post("/rag/query", response_model=QueryResponse,
              responses={403: {"model": ErrorBody}, 422: {"model": ErrorBody}})
    def rag_query(body: QueryRequest, who: Authed):  # noqa: ANN202 - the union response model
        tenant = tenant_of(who, body.tenant_id)
        if body.mode == "retrieval_only":
            try:
                return engine.retrieve(body.query, tenant=tenant, project=body.project_id, k=body.k,
                                       settings=body.settings)
            except ConfigError as exc:
                raise ApiError(422, "invalid_settings", str(exc)) from exc
        return answer_for(engine, public, db, body.query, tenant=tenant, project=body.project_id, k=body.k,
                          settings=body.settings, llm=body.llm)

    @app.post("/retrieval", response_model=DifyRetrievalResponse)
    def dify_retrieval(body: DifyRetrievalRequest, who: Authed) -> DifyRetrievalResponse:
        setting = body.retrieval_setting
        keep, settings, exact = (lambda m: True), {}, True
        if body.metadata_condition is not None:
            try:
                keep, settings, exact = compile_condition(body.metadata_condition)
            except (UnsupportedCondition, ValueError) as exc:
                raise ApiError(400, "unsupported_condition", str(exc)) from exc
        # Conditions retrieval cannot apply itself filter a larger retrieval, so k matching records can remain.
        k = setting.top_k if exact else min(100, setting.top_k * OVERFETCH)
        result = engine.retrieve(body.query, tenant=who.tenant, project=body.knowledge_id, k=k,
                                 settings=settings or None)
        kept = [item for item in result.results if keep(item.metadata) and item.confidence >= setting.score_threshold]
        kept.sort(key=lambda item: -item.confidence)  # Dify ranks by score: best first (ties keep retrieval's order)
        records = [
            DifyRecord(
                content=item.content_snippet, score=item.confidence, title=item.metadata.filename,
                metadata={"source_id": item.source_id, "doc_code": item.metadata.doc_code,
                          "filename": item.metadata.filename, "page": item.metadata.page,
                          "page_end": item.metadata.page_end, "section": item.metadata.section_id,
                          "section_id": item.metadata.section_id, "section_title": item.metadata.section_title},
            )
            for item in kept[: setting.top_k]
        ]
        return DifyRetrievalResponse(records=records)

    @app.get("/sources/{semantic_id}", response_model=SourceView, responses={404: {"model": ErrorBody}})
    def source(semantic_id: Identifier, who: Authed) -> SourceView:
        try:
            return SourceView(semantic_id=semantic_id, chunk=engine.source(semantic_id, tenant=who.tenant))
        except NotFound as exc:
            raise ApiError(404, "not_found", f"no source {semantic_id!r}") from exc

    def _chunk_page(semantic_id: str, who: Caller, page: int | None):  # noqa: ANN202
        try:
            chunk = engine.source(semantic_id, tenant=who.tenant)
        except NotFound as exc:
            raise ApiError(404, "not_found", f"no source {semantic_id!r}") from exc
        prov = chunk.provenance
        page = page or prov.page
        if not prov.page <= page <= prov.page_end:
            raise ApiError(404, "not_found", f"source {semantic_id!r} is on pages {prov.page}-{prov.page_end}")
        return chunk, page

    @app.get("/sources/{semantic_id}/highlights", response_model=HighlightView, responses={404: {"model": ErrorBody}})
    def source_highlights(semantic_id: Identifier, who: Authed, page: int | None = None) -> HighlightView:
        chunk, page = _chunk_page(semantic_id, who, page)
        found = engine.highlights(chunk)
        if found is None:
            return HighlightView(semantic_id=semantic_id, page=page, has_page_image=False, matched=0.0,
                                 confident=False, boxes=[])
        return HighlightView(semantic_id=semantic_id, page=page, has_page_image=True, matched=found.matched,
                             confident=found.confident,
                             boxes=[(b.x0, b.y0, b.x1, b.y1) for b in found.on(page)])

    @app.get("/sources/{semantic_id}/page.png", response_class=Response,
             responses={200: {"content": {"image/png": {}}}, 404: {"model": ErrorBody}})
    def source_page(semantic_id: Identifier, who: Authed, page: int | None = None) -> Response:
        from api.highlight import render_page

        chunk, page = _chunk_page(semantic_id, who, page)
        pdf = engine.source_pdf(chunk)
        if pdf is None:
            raise ApiError(404, "no_page_image", "this source is not a PDF: it has no page to show")
        found = engine.highlights(chunk)
        png, _ = render_page(pdf, page, found.on(page) if found else ())
        return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=300"})

    @app.get("/documents", response_model=DocumentList)
    def documents(who: Authed) -> DocumentList:
        # The file name stands in for the server path the catalog keeps.
        return DocumentList(documents=[e.model_copy(update={"path": e.filename}) for e in engine.documents(who.tenant)])

    @app.post("/documents", response_model=list[UploadReport])
    def upload(who: Authed, files: Annotated[list[UploadFile], File()],
               project_id: Annotated[Identifier, Form()] = "default",
               doc_code: Annotated[DocCode | None, Form()] = None) -> list[UploadReport]:
        out = []
        for f in files:
            try:
                report = engine.ingest_upload(f.filename or "upload", f.file.read(), tenant=who.tenant,
                                              project=project_id, doc_code=doc_code or None)
            except (StorageError, ArtifactCorruptError, ArtifactNotFoundError):
                raise  # the store's trouble, not the file's: 503/507 above
            except CiteboundError as exc:
                raise ApiError(422, "ingest_failed", str(exc)) from exc
            fr = report.files[0]
            if db is not None:
                if report.run_id:
                    db.record_run(report.run_id, who.tenant, "ingest")
                if fr.doc_key and fr.status != "error":
                    db.record_document(fr.doc_key, who.tenant, project_id, Path(fr.path).name, fr.doc_code)
            out.append(UploadReport(filename=Path(fr.path).name, status=fr.status, doc_key=fr.doc_key,
                                    doc_code=fr.doc_code, n_pages=fr.n_pages, n_chunks=fr.n_chunks,
                                    quarantined=fr.quarantined, reason=fr.reason, message=public(fr.message),
                                    run_id=report.run_id))
        return out

    @app.delete("/documents/{doc}", responses={404: {"model": ErrorBody}})
    def delete_document(doc: Identifier, who: Authed) -> dict[str, list[str]]:
        try:
            removed = engine.remove_document(doc, tenant=who.tenant)
        except NotFound as exc:
            raise ApiError(404, "not_found", f"no document {doc!r}") from exc
        for key in removed:
            if db is not None:
                db.forget_document(key)
        return {"removed": list(removed)}

    @app.get("/runs/{run_id}", responses={404: {"model": ErrorBody}})
    def run(run_id: Identifier, who: Authed) -> dict:
        record = engine.run(run_id)
        owner = (db.run_tenant(run_id) if db is not None else None) or (
            dict(record.parameters).get("tenant") if record is not None else None)
        if record is None or record.run_id != run_id or owner != who.tenant:
            raise ApiError(404, "not_found", f"no run {run_id!r}")
        return json.loads(public(record.model_dump_json()))

    return app
