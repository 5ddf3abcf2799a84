"""Dify's external-knowledge API beyond the request and response bodies: ``metadata_condition`` over a
retrieval's results, and the error codes of Dify's ``{error_code, error_msg}`` shape.

Conditions. Dify sends ``{"logical_operator": "and" | "or", "conditions": [{"name", "comparison_operator",
"value"}]}``; citebound filters on four fields of a result's metadata: ``doc_code``, ``filename``, ``section``
(the section id; ``section_id`` and ``section_title`` are accepted too) and ``page``. Text fields take Dify's
text operators (``contains``, ``not contains``, ``start with``, ``end with``, ``is``, ``is not``, ``in``,
``not in``, ``empty``, ``not empty``), compared without regard to case; ``page`` takes the number operators
(``=``, ``≠``, ``>``, ``<``, ``≥``, ``≤``; ``!=``, ``>=``, ``<=`` too) and ``is``, ``is not``, ``in``, ``not in``,
``empty``, ``not empty``. A chunk spans pages ``page..page_end``: it matches a page condition when one of its pages
does, and a negated one (``≠``, ``is not``, ``not in``) when none does. Any other field or operator (``before``
and ``after`` have no date field here to compare) is refused with HTTP 400 and error code 3002, never ignored.

Conditions that select by doc code (``is``, ``in``) or page range under ``and`` are also given to retrieval as
its own filters (``doc_codes``, ``page_min``, ``page_max``), so the top k are found among the matching chunks;
other conditions filter a larger retrieval (``OVERFETCH`` times k, at most 100), then the top k are kept.

Error codes: Dify suggests 1001 (bad Authorization header), 1002 (authorization failed) and 2001 (no such
knowledge base); citebound adds 3001 (invalid request), 3002 (unsupported metadata condition), 3003 (request
too large), 3004 (too many requests or quota), 5001 (a document or the store is damaged or unavailable) and
5000 (internal error).

>>> keep, settings, exact = compile_condition({"logical_operator": "and", "conditions": [
...     {"name": "doc_code", "comparison_operator": "is", "value": "IPC"},
...     {"name": "page", "comparison_operator": "≥", "value": 2}]})
>>> settings, exact
({'doc_codes': ['IPC'], 'page_min': 2}, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from contracts.retrieval import ResultMetadata

__all__ = ["UnsupportedCondition", "compile_condition", "dify_error_code", "OVERFETCH"]

OVERFETCH = 4

_ALIASES = {"!=": "≠", ">=": "≥", "<=": "≤", "==": "=", "starts with": "start with", "ends with": "end with",
            "null": "empty", "not null": "not empty"}
_TEXT_FIELDS: dict[str, Callable[[ResultMetadata], str | None]] = {
    "doc_code": lambda m: m.doc_code,
    "filename": lambda m: m.filename,
    "section": lambda m: m.section_id,
    "section_id": lambda m: m.section_id,
    "section_title": lambda m: m.section_title,
}
_TEXT_OPS = {"contains", "not contains", "start with", "end with", "is", "is not", "in", "not in", "empty",
             "not empty"}
_PAGE_OPS = {"=", "≠", ">", "<", "≥", "≤", "is", "is not", "in", "not in", "empty", "not empty"}
_NEGATED = {"not contains": "contains", "is not": "is", "not in": "in", "≠": "=", "not empty": "empty"}


class UnsupportedCondition(ValueError):
    """A metadata condition citebound cannot apply (field, operator or value): the request is refused."""


def _texts(value: Any, op: str) -> list[str]:
    values = value if isinstance(value, list) else [value]
    if not values or any(v is None or isinstance(v, dict | list) for v in values):
        raise UnsupportedCondition(f"operator {op!r} needs a value")
    return [str(v).casefold() for v in values]


def _pages(value: Any, op: str) -> list[int]:
    values = value if isinstance(value, list) else [value]
    try:
        pages = [int(str(v).strip()) for v in values]
    except ValueError as exc:
        raise UnsupportedCondition(f"operator {op!r} on page needs whole page numbers, got {value!r}") from exc
    if not pages:
        raise UnsupportedCondition(f"operator {op!r} needs a value")
    return pages


def _text_test(op: str, value: Any, field: Callable[[ResultMetadata], str | None]) -> Callable[[ResultMetadata], bool]:
    if op == "empty":
        return lambda m: not (field(m) or "")
    wanted = _texts(value, op)
    if op in ("is", "in"):
        if op == "is" and len(wanted) != 1:
            raise UnsupportedCondition("operator 'is' takes one value (use 'in' for several)")
        return lambda m: (field(m) or "").casefold() in wanted
    test = {"contains": str.__contains__, "start with": str.startswith, "end with": str.endswith}[op]
    return lambda m: test((field(m) or "").casefold(), wanted[0])


def _page_test(op: str, value: Any) -> Callable[[ResultMetadata], bool]:
    if op == "empty":
        return lambda m: False  # every chunk has a page
    pages = _pages(value, op)
    if op in ("in", "=", "is"):
        return lambda m: any(m.page <= p <= m.page_end for p in pages)
    bound = pages[0]
    return {">": lambda m: m.page_end > bound, "<": lambda m: m.page < bound,
            "≥": lambda m: m.page_end >= bound, "≤": lambda m: m.page <= bound}[op]


def _one(cond: Mapping[str, Any]) -> tuple[str, str, Any, Callable[[ResultMetadata], bool]]:
    if not isinstance(cond, Mapping):
        raise UnsupportedCondition("each condition is an object {name, comparison_operator, value}")
    names = cond.get("name")
    names = names if isinstance(names, list) else [names]
    raw_op = cond.get("comparison_operator")
    if not isinstance(raw_op, str) or not names or not all(isinstance(n, str) for n in names):
        raise UnsupportedCondition("a condition needs a name and a comparison_operator")
    op = _ALIASES.get(raw_op.strip().lower(), raw_op.strip().lower())
    positive = _NEGATED.get(op, op)
    value = cond.get("value")
    tests = []
    for name in names:
        if name in _TEXT_FIELDS:
            if op not in _TEXT_OPS:
                raise UnsupportedCondition(f"operator {raw_op!r} is not supported on {name!r} (a text field)")
            tests.append(_text_test(positive, value, _TEXT_FIELDS[name]))
        elif name == "page":
            if op not in _PAGE_OPS:
                raise UnsupportedCondition(f"operator {raw_op!r} is not supported on 'page'")
            tests.append(_page_test(positive, value))
        else:
            raise UnsupportedCondition(
                f"metadata field {name!r} is not one of doc_code, filename, section, section_title, page")
    matches = (lambda m: any(t(m) for t in tests)) if len(tests) > 1 else tests[0]
    keep = (lambda m: not matches(m)) if positive != op else matches
    return (names[0] if len(names) == 1 else ""), op, value, keep


def compile_condition(condition: Mapping[str, Any]) -> tuple[Callable[[ResultMetadata], bool], dict, bool]:
    """(the test a result's metadata must pass, retrieval settings that apply part of it as filters, whether
    those settings apply all of it). Raises UnsupportedCondition."""
    logical = str(condition.get("logical_operator") or "and").strip().lower()
    if logical not in ("and", "or"):
        raise UnsupportedCondition(f"logical_operator {logical!r} is not 'and' or 'or'")
    conditions = condition.get("conditions")
    if not isinstance(conditions, list):
        raise UnsupportedCondition("metadata_condition needs a list of conditions")
    compiled = [_one(c) for c in conditions]
    tests = [c[3] for c in compiled]
    if not tests:
        return (lambda m: True), {}, True
    keep = (lambda m: all(t(m) for t in tests)) if logical == "and" else (lambda m: any(t(m) for t in tests))
    settings: dict[str, Any] = {}
    exact = logical == "and" or len(compiled) == 1
    for name, op, value, _ in compiled:
        pushed = exact and _push(settings, name, op, value)
        exact = exact and pushed
    return keep, (settings if logical == "and" or len(compiled) == 1 else {}), exact


def _push(settings: dict[str, Any], name: str, op: str, value: Any) -> bool:
    """Add what retrieval's own filters can apply of one condition; whether they apply all of it."""
    if name == "doc_code" and op in ("is", "in"):
        codes = [str(v) for v in (value if isinstance(value, list) else [value])]
        settings["doc_codes"] = [c for c in settings["doc_codes"] if c.casefold() in {x.casefold() for x in codes}] \
            if "doc_codes" in settings else codes
        return True
    if name == "page" and op in ("=", "is", ">", "<", "≥", "≤") and not isinstance(value, list):
        page = int(str(value).strip())
        low = {"=": page, "is": page, ">": page + 1, "≥": page}.get(op)
        high = {"=": page, "is": page, "<": page - 1, "≤": page}.get(op)
        if low is not None:
            settings["page_min"] = max(low, settings.get("page_min", low))
        if high is not None:
            settings["page_max"] = min(high, settings.get("page_max", high))
        return True
    return False


_CODES = {401: 1001, 403: 1002, 404: 2001, 400: 3001, 411: 3001, 422: 3001, 413: 3003, 429: 3004, 503: 5001,
          507: 5001}


def dify_error_code(status: int, error: str) -> int:
    """The ``error_code`` of a /retrieval error (see the module docstring)."""
    if error == "unsupported_condition":
        return 3002
    return _CODES.get(status, 5000 if status >= 500 else 3001)
