"""``citebound ask``, ``retrieve`` and ``validate``: a question answered (or refused), retrieval alone, and the
validator alone; ``ask`` and ``retrieve`` go to a running ``citebound api`` of their store, else run in-process."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cli.common import add_common, parse_sets, prepare, store_root

__all__ = ["add_parsers", "cmd_ask", "cmd_retrieve", "cmd_validate", "format_answer"]


def _where(c) -> str:  # noqa: ANN001
    pages = f"page {c.page}" if c.page == c.page_end else f"pages {c.page}-{c.page_end}"
    section = f", section {c.section_id}" + (f" ({c.section_title})" if c.section_title else "") if c.section_id else ""
    lines = [f"  [{c.source_id}] {c.filename}, {pages}{section}"]
    for s in getattr(c, "successors", ()):
        # The successor map's entry for the cited provision: which provision replaced it, and from when.
        title = f" ({s.title})" if s.title else ""
        ids = f" [{', '.join(s.semantic_ids)}]" if s.semantic_ids else " (not among this project's documents)"
        when = f", in force from {s.commencement}" if s.commencement else ""
        lines.append(f"      replaced by {s.code} section {s.section}{title}{ids}{when}")
    return "\n".join(lines)


def format_answer(answer) -> str:  # noqa: ANN001
    lines = [answer.answer, ""]
    if answer.citations:
        lines.append("Sources:")
        lines.extend(_where(c) for c in answer.citations)
    if answer.related:
        # On plain-language questions the right provision is often retrieved just below the cited one.
        lines.append("Also retrieved, not used in the answer (check them if the cited provision does not fit):")
        lines.extend(_where(c) for c in answer.related)
    verdict = "grounded" if answer.status == "success" else f"refused: {answer.refusal_reason or answer.reason_code}"
    if answer.status == "success" and answer.confidence is not None:
        verdict += f", retrieval confidence {answer.confidence:.2f}"
    lines.append(f"Status: {answer.status} ({verdict})" + (f"  run {answer.run_id}" if answer.run_id else ""))
    return "\n".join(lines)


def _questions(args: argparse.Namespace) -> list[str]:
    if args.questions:
        text = Path(args.questions).read_text(encoding="utf-8")
        return [q.strip() for q in text.splitlines() if q.strip() and not q.lstrip().startswith("#")]
    if not args.question:
        raise SystemExit("citebound: give a QUESTION or --questions FILE")
    return [args.question]


def _running_api(args: argparse.Namespace):  # noqa: ANN202 - api.client.ApiClient | None
    """The user's running ``citebound api`` for this store, if any (the warm path: no torch/Prefect here)."""
    if os.environ.get("CITEBOUND_PREFECT", "background") != "background":
        return None  # tests and ephemeral runs stay in-process
    from flows.settings import Settings

    settings = Settings()
    if not _listening(settings.api_url):
        return None  # nothing there: skip importing httpx and asking
    from api.client import api_for_store

    return api_for_store(store_root(args), settings.api_url, settings.api_key)


def _listening(url: str) -> bool:
    """Whether anything accepts connections at the URL's host and port (a refused connect takes microseconds)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=0.5):
            return True
    except (OSError, ValueError):
        return False


def _edge_settings(overrides: dict[str, str]) -> dict[str, str]:
    """This process's CITEBOUND_* answer settings, resolved here and sent with the request (the API's own
    environment must not decide them)."""
    from flows.settings import Settings

    settings = Settings()
    edge = {}
    if settings.min_confidence is not None:
        edge["min_confidence"] = str(settings.min_confidence)
    if settings.refusal_text:
        edge["refusal_text"] = settings.refusal_text
    return {**edge, **overrides}


def _llm_choice(args: argparse.Namespace) -> dict[str, str] | None:
    from flows.settings import Settings

    settings = Settings()
    backend = (args.llm or settings.llm).strip().lower()
    if backend != "openai":
        return {"backend": backend}
    choice = {"backend": "openai", "model": args.llm_model or settings.llm_model}
    if settings.openai_base_url:
        choice["base_url"] = settings.openai_base_url
    return choice


def cmd_ask(args: argparse.Namespace) -> int:
    questions = _questions(args)
    overrides = parse_sets(args.set)
    if overrides:
        from flows.answer_flow import validate_overrides

        validate_overrides(overrides)  # a bad key or value fails here, loudly
    params = dict(tenant=args.tenant, project=args.project, top_k=args.top_k, llm=args.llm, llm_model=args.llm_model,
                  overrides=overrides or None)
    client = _running_api(args)
    if client is not None:
        from contracts import Answer

        settings = _edge_settings(overrides)
        llm = _llm_choice(args)

        def via_api():  # noqa: ANN202
            try:
                for q in questions:
                    body = {"query": q, "tenant_id": args.tenant, "project_id": args.project, "k": args.top_k,
                            "mode": "answer", "llm": llm, "settings": settings or None}
                    yield Answer.model_validate(client.query(body))
            finally:
                client.close()

        answers = via_api()
    elif args.flow_run:
        root = prepare(args)
        from flows.answer_flow import answer_flow
        from flows.runners import local_run_settings

        def run_all():  # noqa: ANN202
            with local_run_settings(os.environ.get("PREFECT_API_URL")):
                for q in questions:
                    yield answer_flow(question=q, store=str(root), **params)

        answers = run_all()
    else:
        # The answer flow's body without a Prefect flow run: the same stages, artifacts and run record
        # (tests/cli/test_ask_cold.py), neither Prefect nor its server needed.
        root = prepare(args, prefect=False)
        from flows.answer_flow import answer_question

        answers = (answer_question(q, store=str(root), **params) for q in questions)
    refused = 0
    for q, answer in zip(questions, answers, strict=True):
        refused += answer.status != "success"
        if args.json:
            print(answer.model_dump_json())
        else:
            if len(questions) > 1:
                print(f"Q: {q}")
            print(format_answer(answer))
            if len(questions) > 1:
                print()
    return 0 if refused == 0 else 1


def _print_retrieval(q: str, result, as_json: bool) -> None:  # noqa: ANN001
    if as_json:
        print(result.model_dump_json())
        return
    print(f"Q: {q}  [intent {result.query_analysis.intent}]")
    for item in result.results:
        m = item.metadata
        print(f"  {item.rank}. [{item.source_id}] conf {item.confidence:.2f}  {m.filename} p.{m.page}"
              f"  {item.content_snippet[:90]!r}")


def cmd_retrieve(args: argparse.Namespace) -> int:
    questions = _questions(args)
    client = _running_api(args)
    if client is not None:
        from contracts import RetrievalResult

        try:
            for q in questions:
                body = {"query": q, "tenant_id": args.tenant, "project_id": args.project, "k": args.top_k,
                        "mode": "retrieval_only", "settings": {"mode": args.mode}}
                _print_retrieval(q, RetrievalResult.model_validate(client.query(body)), args.json)
        finally:
            client.close()
        return 0
    root = prepare(args, prefect=False)
    from contracts import AnswerRequest, ArtifactStore, RetrievalResult, RetrieveConfig
    from flows.ingest_flow import INDEX_POINTER
    from flows.tasks import request_task, retrieve_task

    store = ArtifactStore(root)
    index_ref = store.get_pointer(INDEX_POINTER)
    if index_ref is None:
        print("citebound: no index in this store yet: run `citebound ingest` first", file=sys.stderr)
        return 2
    # The project's standing settings shape retrieval here as they do in `ask` (then --top-k / --mode).
    from contracts import GenerationPolicy
    from flows.answer_flow import apply_overrides, load_project_settings
    from flows.index_views import view_ref

    standing = load_project_settings(store, args.tenant, args.project)
    cfg, _ = apply_overrides(RetrieveConfig(), GenerationPolicy(), dict(standing.overrides) if standing else {})
    cfg = RetrieveConfig.model_validate({**cfg.model_dump(), "top_k": args.top_k or cfg.top_k, "mode": args.mode})
    view = view_ref(store, args.tenant, args.project)  # this tenant and project's own view of the index
    for q in questions:
        # Same tasks as the answer flow, called without orchestration: retrieval-only mode.
        req = request_task.fn(str(root), AnswerRequest(query=q, tenant_id=args.tenant, project_id=args.project,
                                                       top_k=cfg.top_k))
        step = retrieve_task.fn(str(root), req.output, view, cfg)
        _print_retrieval(q, store.get(step.output, RetrievalResult), args.json)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from contracts import GenerationPolicy, RetrievalResult, RetrieveConfig
    from stages.grounding.validate import validate_answer_text
    from stages.retrieval.context import build_context_pack

    raw = Path(args.answer).read_text(encoding="utf-8")
    try:
        parsed = json.loads(raw)
        text = parsed["answer"] if isinstance(parsed, dict) else str(parsed)
    except (ValueError, KeyError):
        text = raw
    chunks_text = Path(args.chunks).read_text(encoding="utf-8").strip()
    try:
        result = RetrievalResult.model_validate_json(chunks_text)
    except ValueError:
        # `retrieve --questions FILE --json` writes one result per line: validate against the first.
        result = RetrievalResult.model_validate_json(chunks_text.splitlines()[0])
    policy = GenerationPolicy(**({"refusal_text": args.refusal_text} if args.refusal_text else {}))
    # Validation judges the answer against everything that was retrieved: no budget trimming here.
    pack = build_context_pack(result, RetrieveConfig(top_k=max(1, len(result.results)), pack_token_budget=10**6), policy)
    answer = validate_answer_text(text.strip(), pack, policy)
    valid = answer.status == "success" or answer.reason_code == "model_refused"
    if args.json:
        print(json.dumps({"valid": valid, "answer": json.loads(answer.model_dump_json())}))
    else:
        print("VALID" if valid else "INVALID")
        for check in answer.checks:
            if not check.passed:
                print(f"  x {check.name}: {check.reason_code} {check.detail or ''}".rstrip())
        if answer.refusal_reason and not valid:
            print(f"  reason: {answer.refusal_reason}")
    return 0 if valid else 1


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The ask, retrieve and validate commands."""
    for name, func, help_ in (("ask", cmd_ask, "answer a question from the documents, or refuse"),
                              ("retrieve", cmd_retrieve, "retrieval only: the RetrievalResult")):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("question", nargs="?")
        sp.add_argument("--questions", help="file with one question per line")
        sp.add_argument("--top-k", type=int)
        add_common(sp)
        if name == "ask":
            sp.add_argument("--llm", help="extractive (default) | openai")
            sp.add_argument("--llm-model")
            sp.add_argument("--set", action="append", default=[],
                            help="key=value: a retrieval or policy setting for this question (repeatable), "
                                 "e.g. dense_weight=1 or min_confidence=0.7")
            sp.add_argument("--flow-run", action="store_true",
                            help="answer as a Prefect flow run on your local Prefect server (shown in its UI); "
                                 "the answer, artifacts and run record are the same without it")
        else:
            sp.add_argument("--mode", choices=["hybrid", "dense", "bm25"], default="hybrid")
        sp.set_defaults(func=func)

    sp = sub.add_parser("validate", help="validate an answer against `retrieve --json` output")
    sp.add_argument("--answer", required=True, help="answer text file (or JSON with an 'answer' field)")
    sp.add_argument("--chunks", required=True, help="RetrievalResult JSON from `citebound retrieve --json`")
    sp.add_argument("--refusal-text")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_validate)
