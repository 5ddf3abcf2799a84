"""A real, scriptable HTTP server speaking the OpenAI chat-completions wire format on 127.0.0.1.

Started by a test, stopped after. ``mode`` picks the behaviour of ``POST /v1/chat/completions``:

- ``normal``: 200 with one choice whose content is ``reply(messages)`` (a function of the request);
- ``slow``: like normal, after sleeping ``delay`` seconds (to trigger the client's timeout);
- ``error500``: HTTP 500 with an OpenAI-style error body;
- ``malformed``: 200 with a body that is not JSON;
- ``no_choices``: 200 with ``"choices": []``;
- ``null_content``: 200 with a choice whose message content is null.

Every request body is recorded in ``requests``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from evaluation.gullible_llm import LoopbackServer

__all__ = ["FakeOpenAIServer", "ServerMode"]

ServerMode = Literal["normal", "slow", "error500", "malformed", "no_choices", "null_content"]


class FakeOpenAIServer(LoopbackServer):
    """``with FakeOpenAIServer(reply=...) as server: OpenAILLM(..., base_url=server.base_url)``."""

    thread_name = "fake-openai"

    def __init__(
        self,
        reply: Callable[[list[dict[str, Any]]], str] | str = "ok",
        *,
        mode: ServerMode = "normal",
        delay: float = 2.0,
    ) -> None:
        super().__init__()
        self.reply = reply
        self.mode: ServerMode = mode
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # keep test output clean
                return

            def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                payload = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(payload)
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not self.path.endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                mode = owner.mode
                if mode == "slow":
                    time.sleep(owner.delay)
                if mode == "error500":
                    self._send(500, b'{"error": {"message": "internal failure", "type": "server_error"}}')
                    return
                if mode == "malformed":
                    self._send(200, b'{"id": "x", "choices": [ this is not json')
                    return
                messages = payload.get("messages", [])
                content: str | None = owner.reply(messages) if callable(owner.reply) else owner.reply
                if mode == "null_content":
                    content = None
                choices = [] if mode == "no_choices" else [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ]
                body = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 0,
                    "model": payload.get("model", "test-model"),
                    "choices": choices,
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                self._send(200, json.dumps(body).encode())

        return Handler
