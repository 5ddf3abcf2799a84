"""``citebound mcp``: the MCP tools (``api/mcp_server.py``) over stdin/stdout for a desktop agent, for one tenant
and project (``--tenant``, ``--project``). The same engine as ``citebound api``; no Prefect server is started
(answers and searches need none), so ending this process ends everything it began."""

from __future__ import annotations

import argparse
import sys

from cli.common import add_common, prepare

__all__ = ["add_parsers", "cmd_mcp"]


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the MCP tools over stdio until the client closes the pipe."""
    from pydantic import TypeAdapter, ValidationError

    from api.models import Identifier

    for flag, value in (("--tenant", args.tenant), ("--project", args.project)):
        try:
            TypeAdapter(Identifier).validate_python(value)
        except ValidationError as exc:
            raise SystemExit(f"citebound: {flag} {value!r}: {exc.errors()[0]['msg']}") from None

    from flows.settings import Settings, configure_query_process

    configure_query_process()
    root = prepare(args, prefect=False)
    from api.answers import path_scrubber
    from api.engine import Engine, EngineConfig
    from api.mcp_server import serve_stdio
    from api.mcp_tools import Tools

    settings = Settings()
    engine = Engine(EngineConfig(store_root=root, index_uri=settings.index_uri, quota_bytes=settings.quota_bytes,
                                 quota_documents=settings.quota_documents))
    note = engine.warm_up()
    if note:
        print(f"citebound: {note}", file=sys.stderr)  # stdout is the protocol's
    print(f"citebound MCP server (stdio) for {root}, tenant {args.tenant!r}, project {args.project!r}",
          file=sys.stderr)
    serve_stdio(Tools(engine, path_scrubber(root), default_project=args.project), args.tenant)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("mcp", help="serve the MCP tools (search, ask, get_source, list_documents) over stdio")
    add_common(sp)
    sp.set_defaults(func=cmd_mcp)
