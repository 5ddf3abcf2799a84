"""What ``POST /rag/query`` and the MCP ``ask`` tool share: the answer for one caller, the error they raise, and
the scrubber that keeps server paths out of every message. Its own module, below both ``api.app`` and
``api.mcp_tools``, so neither imports the other."""

from __future__ import annotations

import re
from pathlib import Path

from api.db import Database
from api.engine import Engine
from api.models import LLMChoice
from contracts import Answer
from contracts.errors import ConfigError

__all__ = ["ApiError", "answer_for", "path_scrubber"]

# The answer flow's reason codes for a store the file system refuses (flows.answer_flow.degraded_answer), and
# the status an upload or a retrieval gets for the same trouble.
_STORAGE_REASONS = {"storage_full": 507, "storage_unavailable": 503}


class ApiError(Exception):
    def __init__(self, status: int, error: str, detail: str | None = None) -> None:
        super().__init__(detail or error)
        self.status, self.error, self.detail = status, error, detail


def path_scrubber(store_root: Path):  # noqa: ANN201 - Callable[[str | None], str | None]
    """A function that replaces every path inside the store in a text by its last part (``uploads/…/a.pdf`` ->
    ``a.pdf``): messages reach callers, server paths must not."""
    root = str(Path(store_root).resolve())
    inside = re.compile(re.escape(root) + r"(/[^\s'\":,;)\]]*)?")

    def scrub(text: str | None) -> str | None:
        if not text or root not in text:
            return text
        return inside.sub(lambda m: (m.group(1) or "/the store").rsplit("/", 1)[-1], text)

    return scrub


def answer_for(engine: Engine, public, db: Database | None, query: str, *, tenant: str, project: str,  # noqa: ANN001
               k: int | None = None, settings: dict | None = None, llm: LLMChoice | None = None) -> Answer:
    """The answer ``POST /rag/query`` gives (and the MCP ``ask`` tool): a bad setting is ApiError 422, a store the
    file system refuses 507/503 (not a refusal); the run is recorded for the tenant; no server path in the text."""
    try:
        answer = engine.answer(query, tenant=tenant, project=project, k=k, settings=settings,
                               llm=llm.backend if llm else None, llm_model=llm.model if llm else None,
                               llm_base_url=llm.base_url if llm else None)
    except ConfigError as exc:
        raise ApiError(422, "invalid_settings", str(exc)) from exc
    if answer.status == "error" and answer.reason_code in _STORAGE_REASONS:
        # A store the file system refuses: the same 507/503 as an upload or a retrieval, not a refusal.
        raise ApiError(_STORAGE_REASONS[answer.reason_code], "storage_unavailable",
                       (answer.refusal_reason or "").partition("): ")[2] or None)
    if db is not None and answer.run_id:
        db.record_run(answer.run_id, tenant, "answer")
    if answer.refusal_reason and public(answer.refusal_reason) != answer.refusal_reason:
        answer = answer.model_copy(update={"refusal_reason": public(answer.refusal_reason)})
    return answer


