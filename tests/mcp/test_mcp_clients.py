"""The official Python SDK's client against citebound's MCP server as real processes: `citebound mcp` over stdio
and `citebound api` at /mcp over streamable HTTP, on the demo corpus. Tools listed with their schemas, each one
called; a cited answer, a typed refusal that is a result, tool errors for bad input (and the server keeps
serving); tenant a never sees tenant b's documents through any tool; results equal the HTTP routes'."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.mcp.conftest import ROOT, citebound, env

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GROUNDED = "What is wrongful gain?"  # answered from the penal code (tenant a)
OUT_OF_SCOPE = "What is the capital of Australia?"
TEXTBOOK = "What is photosynthesis?"  # the textbook's subject (tenant b only)
TOOLS = {"search", "ask", "get_source", "list_documents"}
BAD_INPUTS = [
    ("search", {"query": "wrongful gain", "colour": "red"}, "colour"),  # an unknown field
    ("search", {"query": "wrongful gain", "k": "5"}, "k"),  # a wrong type
    ("search", {"query": "wrongful gain", "k": 0}, "k"),  # out of range
    ("search", {"query": "wrongful gain", "k": 101}, "k"),
    ("ask", {"query": "wrongful\x00gain"}, "query"),  # a NUL byte
    ("ask", {"query": "x" * 4001}, "query"),  # oversized
    ("ask", {}, "query"),  # missing
    ("get_source", {"source_id": "IPC\x00_1"}, "source_id"),
    ("list_documents", {"project_id": 7}, "project_id"),
]


def stdio_client(store, tenant: str):  # noqa: ANN001, ANN201
    from mcp import Client, StdioServerParameters

    argv = citebound(store, "mcp", "--tenant", tenant)
    return Client(StdioServerParameters(command=argv[0], args=argv[1:], env=env(), cwd=str(ROOT)),
                  read_timeout_seconds=300)


def http_client(url: str, key: str | None):  # noqa: ANN201
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"authorization": f"Bearer {key}"} if key else {}
    return Client(streamable_http_client(url + "/mcp", http_client=create_mcp_http_client(headers=headers)),
                  read_timeout_seconds=300)


def run(client_factory: Callable[[], Any], body: Callable[[Any], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with client_factory() as client:
            return await body(client)

    return anyio.run(main)


async def call(client, name: str, args: dict) -> tuple[bool, dict | None, str]:  # noqa: ANN001
    result = await client.call_tool(name, args)
    text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    return result.is_error, result.structured_content, text


async def session_walk(client) -> dict[str, Any]:  # noqa: ANN001
    """What one session sees: the tools, each tool called once, the refusal, the bad inputs."""
    out: dict[str, Any] = {"tools": {t.name: t for t in (await client.list_tools()).tools}}
    out["documents"] = await call(client, "list_documents", {})
    out["search"] = await call(client, "search", {"query": GROUNDED, "k": 3})
    out["answer"] = await call(client, "ask", {"query": GROUNDED})
    out["refusal"] = await call(client, "ask", {"query": OUT_OF_SCOPE})
    first = (out["search"][1] or {}).get("results") or [{}]
    out["source"] = await call(client, "get_source", {"source_id": first[0].get("source_id", "none")})
    out["bad"] = [await call(client, name, args) for name, args, _ in BAD_INPUTS]
    out["after_bad"] = await call(client, "search", {"query": GROUNDED, "k": 1})  # still serving
    out["textbook"] = await call(client, "search", {"query": TEXTBOOK, "k": 5})
    out["empty"] = await call(client, "search", {"query": GROUNDED, "project_id": "nothing-here"})
    return out


def check_walk(seen: dict[str, Any]) -> None:
    tools = seen["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.input_schema.get("additionalProperties") is False
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name

    is_error, docs, _ = seen["documents"]
    assert not is_error and [d["doc_code"] for d in docs["documents"]] == ["IPC"]

    is_error, found, text = seen["search"]
    assert not is_error and found["status"] == "found" and 1 <= len(found["results"]) <= 3
    assert json.loads(text) == found, "the text content is the structured content as JSON"
    hit = found["results"][0]
    assert hit["document"] == "model_penal_code.pdf" and hit["page"] >= 1 and len(hit["doc_hash"]) == 64

    is_error, answer, _ = seen["answer"]
    assert not is_error and answer["status"] == "answered" and answer["citations"], answer
    assert answer["reason_code"] is None
    assert all(c["document"] == "model_penal_code.pdf" and c["page"] >= 1 for c in answer["citations"])

    is_error, refusal, _ = seen["refusal"]
    assert not is_error, "a refusal is a result, not a tool error"
    assert refusal["status"] == "refused" and refusal["reason_code"] and not refusal["citations"], refusal

    is_error, source, _ = seen["source"]
    assert not is_error and source["source_id"] == hit["source_id"] and source["text"] == hit["snippet"]
    assert source["highlights"]["has_page_image"] is True  # a PDF: where its words are on the page
    assert source["previous_source_id"] or source["next_source_id"]

    for (name, args, field), (is_error, structured, text) in zip(BAD_INPUTS, seen["bad"], strict=True):
        assert is_error, (name, args)
        assert structured is None and field in text and "Traceback" not in text, text
        assert "\x00" not in text
    assert seen["after_bad"][0] is False and seen["after_bad"][1]["status"] == "found"

    # The textbook is tenant b's: tenant a's search never returns it, whatever it asks.
    assert all(r["doc_code"] != "NCERT" for r in seen["textbook"][1]["results"])
    is_error, empty, _ = seen["empty"]
    assert not is_error and empty["status"] == "empty" and empty["reason"] == "no_documents" and not empty["results"]


def test_stdio_sdk_client_lists_and_calls_every_tool(store):
    check_walk(run(lambda: stdio_client(store, "a"), session_walk))


def test_http_sdk_client_lists_and_calls_every_tool_as_the_routes_answer(store, keyed_api):
    seen = run(lambda: http_client(keyed_api.url, keyed_api.keys["a"]), session_walk)
    check_walk(seen)
    # The same code path as the routes: the same hits, the same answer (run ids aside), the same source.
    with httpx.Client(base_url=keyed_api.url, timeout=300,
                      headers={"authorization": f"Bearer {keyed_api.keys['a']}"}) as http:
        retrieval = http.post("/rag/query", json={"query": GROUNDED, "k": 3, "mode": "retrieval_only"}).json()
        answer = http.post("/rag/query", json={"query": GROUNDED}).json()
        hit = seen["search"][1]["results"][0]
        source = http.get(f"/sources/{hit['source_id']}").json()
    assert [(r["source_id"], r["score"]) for r in retrieval["results"]] == \
        [(h["source_id"], h["score"]) for h in seen["search"][1]["results"]]
    assert seen["answer"][1]["answer"] == answer["answer"]
    assert [c["source_id"] for c in seen["answer"][1]["citations"]] == [c["source_id"] for c in answer["citations"]]
    assert source["chunk"]["text"] == seen["source"][1]["text"]
    # The answer's run was recorded for tenant a, as /rag/query's are.
    run_id = seen["answer"][1]["run_id"]
    assert httpx.get(f"{keyed_api.url}/runs/{run_id}", timeout=60,
                     headers={"authorization": f"Bearer {keyed_api.keys['a']}"}).status_code == 200


def test_tenant_b_sees_its_own_and_never_tenant_a_through_any_tool(store, keyed_api):
    async def walk(client) -> dict:  # noqa: ANN001
        a_hit = await call(client, "search", {"query": GROUNDED, "k": 5})
        return {
            "documents": await call(client, "list_documents", {}),
            "search": a_hit,
            "ask": await call(client, "ask", {"query": GROUNDED}),
            "own": await call(client, "search", {"query": TEXTBOOK, "k": 2}),
        }

    a_source = run(lambda: http_client(keyed_api.url, keyed_api.keys["a"]),
                   lambda c: call(c, "search", {"query": GROUNDED, "k": 1}))[1]["results"][0]["source_id"]
    for client in (lambda: http_client(keyed_api.url, keyed_api.keys["b"]), lambda: stdio_client(store, "b")):
        seen = run(client, walk)
        assert [d["doc_code"] for d in seen["documents"][1]["documents"]] == ["NCERT"]
        assert all(r["doc_code"] == "NCERT" for r in seen["search"][1]["results"])
        assert all(c["document"] != "model_penal_code.pdf" for c in seen["ask"][1]["citations"])
        assert seen["own"][1]["status"] == "found"
        # Tenant a's source by its exact id: not found, in the words a missing one gets.
        is_error, structured, text = run(client, lambda c: call(c, "get_source", {"source_id": a_source}))
        assert is_error and structured is None and text.startswith("not_found"), text


def test_http_mcp_without_a_valid_key_gets_what_every_route_gets(keyed_api):
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
    for auth, status in ((None, 401), ("Bearer not-a-key", 403)):
        sent = {**headers, **({"authorization": auth} if auth else {})}
        mcp = httpx.post(keyed_api.url + "/mcp", json=init, headers=sent, timeout=60)
        route = httpx.get(keyed_api.url + "/documents", headers=sent, timeout=60)
        assert mcp.status_code == route.status_code == status
        assert mcp.json() == route.json() and "error" in mcp.json()


def test_a_tool_call_answers_while_an_upload_is_being_ingested(store, keyed_api, tmp_path):
    """An image-only PDF (OCR: minutes on 2 cores) uploaded by tenant a; while that request is still running,
    tenant a's `search` and `ask` over /mcp answer."""
    import threading

    from tests.faults.conftest import image_only_pdf

    shared = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data"))
    if not (shared / "scanned-pdfs").is_dir():
        pytest.skip(f"the shared scans ({shared / 'scanned-pdfs'}) are not on this machine")
    scan = image_only_pdf(tmp_path / "scanned_rules.pdf", shared, copies=2)
    auth = {"authorization": f"Bearer {keyed_api.keys['a']}"}
    uploaded: dict[str, Any] = {}

    def upload() -> None:
        with scan.open("rb") as f:
            uploaded["response"] = httpx.post(keyed_api.url + "/documents", headers=auth, timeout=1800,
                                              files={"files": (scan.name, f, "application/pdf")},
                                              data={"doc_code": "Rules"})

    worker = threading.Thread(target=upload)
    worker.start()
    try:
        uploads = Path(keyed_api.store) / "uploads"
        while worker.is_alive() and not any(p.name == scan.name for p in uploads.rglob("*.pdf")):
            time.sleep(0.1)  # until the API has the upload's copy: its ingest is running
        seen = run(lambda: http_client(keyed_api.url, keyed_api.keys["a"]),
                   lambda c: in_turn(call(c, "search", {"query": GROUNDED, "k": 1}),
                                            call(c, "ask", {"query": GROUNDED})))
        still_ingesting = worker.is_alive()
    finally:
        worker.join(timeout=1800)
    assert still_ingesting, "the upload ended before the tool calls: nothing was shown"
    assert seen[0][1]["status"] == "found" and seen[1][1]["status"] == "answered"
    assert uploaded["response"].status_code == 200, uploaded["response"].text


async def in_turn(*coros):  # noqa: ANN002, ANN201
    return [await c for c in coros]
