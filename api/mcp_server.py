"""citebound as an MCP server (the official ``mcp`` SDK's low-level ``Server``): the tools of ``api.mcp_tools``,
each with its input and output schema, answered with structured content and the same JSON as text.

Two transports, one server: ``serve_stdio`` (``citebound mcp``: one tenant and project, from its flags) and
``McpEndpoint`` (streamable HTTP at ``/mcp`` of the API: stateless JSON responses, each request's tenant from
its own bearer key, authenticated as on every other route before the SDK sees it).

A bad argument, an unknown tool or a failure of the service is a tool error (``is_error``) with one line of
text, never a traceback and never the end of the server; a refusal is a normal result.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from api.mcp_tools import TOOLS, ToolFailure, ToolInputError, Tools, parse_args

__all__ = ["build_server", "serve_stdio", "McpEndpoint", "SCOPE_CALLER"]

log = logging.getLogger("citebound.mcp")
SERVER_NAME = "citebound"
# Where the API's /mcp endpoint leaves the authenticated caller for the tool handler (the ASGI scope).
SCOPE_CALLER = "citebound.caller"
INSTRUCTIONS = ("Grounded search and answers over the documents of one tenant. `ask` answers only from those "
                "documents, every claim citing a checked source, or refuses with a reason_code (status 'refused': "
                "a result, not an error). `search` retrieves without answering; `get_source` shows a source in full.")


def _schema(model: type) -> dict[str, Any]:
    return model.model_json_schema(mode="validation")


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def build_server(tools: Tools, tenant_of: Callable[[Any], str], version: str = "1") -> Server:
    """The MCP server over ``tools``; ``tenant_of(ctx)`` names the tenant of the request being handled."""
    listed = [
        types.Tool(name=name, description=description, input_schema=_schema(args_model),
                   output_schema=out_model.model_json_schema(mode="serialization"),
                   annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
        for name, (args_model, out_model, _, description) in TOOLS.items()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = TOOLS.get(params.name)
        if spec is None:
            return _error(f"unknown tool {params.name!r}: the tools are {', '.join(TOOLS)}")
        args_model, _, method, _ = spec
        try:
            args = parse_args(args_model, params.arguments)
            tenant = tenant_of(ctx)
            # The engine blocks (retrieval, the answer flow, PDF reading): a worker thread, as FastAPI's handlers.
            result = await anyio.to_thread.run_sync(getattr(tools, method), tenant, args)
        except ToolInputError as exc:
            return _error(str(exc))
        except ToolFailure as exc:
            return _error(str(tools.public(str(exc))))
        except Exception as exc:  # noqa: BLE001 - the caller gets a line, the log gets the story
            return _error(_service_error(exc, tools))
        structured = result.model_dump(mode="json")
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(structured))],
                                    structured_content=structured)

    return Server(SERVER_NAME, version=version, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def _service_error(exc: Exception, tools: Tools) -> str:
    """The store's trouble told as the HTTP routes tell it (their error codes), anything else by its type."""
    from api.engine import QuotaExceeded
    from contracts.errors import (
        ArtifactCorruptError,
        ArtifactNotFoundError,
        DocumentDamagedError,
        IndexMismatchError,
        StorageError,
    )

    known = ((DocumentDamagedError, "document_damaged"), (ArtifactCorruptError, "store_damaged"),
             (ArtifactNotFoundError, "store_damaged"), (IndexMismatchError, "index_mismatch"),
             (StorageError, "storage_unavailable"), (QuotaExceeded, "quota_exceeded"))
    for kind, code in known:
        if isinstance(exc, kind):
            return f"{code}: {tools.public(str(exc))}"
    log.exception("MCP tool failed")
    return f"internal_error: {type(exc).__name__}"


def serve_stdio(tools: Tools, tenant: str) -> None:
    """Serve over this process's stdin/stdout until the client closes them (or the process is ended)."""
    from mcp.server.stdio import stdio_server

    server = build_server(tools, lambda ctx: tenant)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


class McpEndpoint:
    """Streamable HTTP for the API: an ASGI app for ``/mcp``; ``lifespan`` runs the SDK's session manager (the
    API's lifespan enters it)."""

    def __init__(self, tools: Tools, authenticate: Callable[[Any], Any], *, loopback_only: bool) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        def tenant_of(ctx: Any) -> str:
            caller = getattr(getattr(ctx, "request", None), "scope", {}).get(SCOPE_CALLER)
            if caller is None:  # never reached through the API: it authenticates every request first
                raise ToolFailure("unauthorized", "no caller for this request")
            return caller.tenant

        self.server = build_server(tools, tenant_of)
        # Keyless local mode serves loopback only: refuse a rebound Host/Origin (a web page must not reach it).
        # With keys, the key is the guard and the API may sit behind any host name.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        ) if loopback_only else TransportSecuritySettings(enable_dns_rebinding_protection=False)
        # Stateless: nothing is kept between requests, so each one carries (and is checked for) its own key.
        self.manager = StreamableHTTPSessionManager(app=self.server, json_response=True, stateless=True,
                                                    security_settings=security)
        self.authenticate = authenticate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """ASGI: ``authenticate(request)`` (run in a worker thread: it reads the key database) gives the caller or
        the response every other route gives for that key (401/403/429); the caller rides in the scope."""
        from starlette.requests import Request

        who = await anyio.to_thread.run_sync(self.authenticate, Request(scope))
        if callable(who):  # a Response
            await who(scope, receive, send)
            return
        scope[SCOPE_CALLER] = who
        await self.manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def lifespan(self, app: Any = None):  # noqa: ANN201
        async with self.manager.run():
            yield
