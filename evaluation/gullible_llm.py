"""A scripted gullible LLM: an OpenAI-compatible chat-completions server that obeys instructions it finds in
the evidence, for measuring what happens when the model does not resist an injected document.

The injection suite starts it on 127.0.0.1 (port 0, a ``ThreadingHTTPServer`` in a daemon thread) and reaches
it through citebound's own OpenAI adapter, so the request, the prompt split and the reply parsing are the
product's. A script cannot understand free text, so the server is told which instructions exist: a mapping
from each planted attack text to what obeying it says. It models the worst case, an LLM that follows every
injected instruction it is shown: when a chunk of the evidence carries a run of an instruction's words
(``RUN_WORDS`` in a row, or all of a shorter instruction; chunks flagged as suspected injections included,
since a gullible model does not heed the flag), the reply is that instruction's payload cited to the chunk it
came from, then one sentence copied from the evidence with its citation, so the answer looks grounded. A
payload may contain ``{system}``: the model then leaks the first line of its system message (the rules), as
a prompt-extraction attack asks. With no instruction in the evidence it answers honestly: the first sentence
of the first citable chunk, cited; with no evidence, the refusal sentence of its rules.

>>> contains_run(word_tokens("a b Ignore all rules now c"), word_tokens("ignore all rules now"), 12)
True
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["RUN_WORDS", "GullibleLLMServer", "LoopbackServer", "contains_run", "gullible_reply", "parse_evidence", "word_tokens"]

RUN_WORDS = 12
"""Consecutive words of an instruction a chunk must carry for the model to notice (and obey) it."""

_WORD = re.compile(r"\w+")
_BEGIN = re.compile(r"<<<EVIDENCE ([0-9a-f]+) BEGIN>>>")
_HEADER = re.compile(r"^\[([^\]\s]+)\](.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_REFUSAL = re.compile(r"^REFUSAL SENTENCE: ?(.*)$", re.M)
_FLAGGED_NOTE = "(flagged"


def word_tokens(text: str) -> tuple[str, ...]:
    """Lower-cased NFKC word tokens: what survives ingestion cleaning and prompt neutralisation unchanged."""
    return tuple(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


def contains_run(haystack: Sequence[str], needle: Sequence[str], run: int) -> bool:
    """Whether ``haystack`` holds ``min(run, len(needle))`` consecutive tokens of ``needle`` in a row."""
    k = min(run, len(needle))
    if k == 0 or len(haystack) < k:
        return False
    grams = {tuple(needle[i : i + k]) for i in range(len(needle) - k + 1)}
    return any(tuple(haystack[i : i + k]) in grams for i in range(len(haystack) - k + 1))


def parse_evidence(user: str) -> list[tuple[str, str, bool]]:
    """(id, text, flagged) of each evidence block of a grounded prompt's user message, in order."""
    begin = _BEGIN.search(user)
    if begin is None:
        return []
    tag = begin.group(1)
    end = user.find(f"<<<EVIDENCE {tag} END>>>", begin.end())
    body = user[begin.end() : end if end >= 0 else len(user)]
    blocks: list[tuple[str, list[str], bool]] = []
    for line in body.splitlines():
        if line.startswith(f"{tag}| ") and blocks:
            blocks[-1][1].append(line[len(tag) + 2 :])
            continue
        header = _HEADER.match(line)
        if header:
            blocks.append((header.group(1), [], _FLAGGED_NOTE in header.group(2)))
    return [(cid, " ".join(lines), flagged) for cid, lines, flagged in blocks]


def _one_line(text: str) -> str:
    # Brackets in a payload would read as citations; newlines would split it into uncited sentences.
    return " ".join(text.replace("[", "(").replace("]", ")").split()).rstrip(" .")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if len(s.split()) >= 5]


def gullible_reply(messages: Sequence[Mapping[str, Any]], instructions: Mapping[str, str]) -> str:
    """The reply to a chat request (see the module docstring for what it says when)."""
    system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
    user = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    chunks = parse_evidence(user)
    tokens = {cid: word_tokens(text) for cid, text, _ in chunks}
    known = [(word_tokens(text), payload) for text, payload in instructions.items()]
    for cid, text, _flagged in chunks:
        for needle, payload in known:
            if not contains_run(tokens[cid], needle, RUN_WORDS):
                continue
            leak = system.strip().splitlines()[0] if system.strip() else ""
            said = _one_line(payload.replace("{system}", leak))
            copied = [s for s in _sentences(text) if not contains_run(word_tokens(s), needle, 4)]
            tail = f"\n{_one_line(copied[0])} [{cid}]." if copied else ""
            return f"{said} [{cid}].{tail}"
    for cid, text, flagged in chunks:
        sentences = _sentences(text)
        if not flagged and sentences:
            return f"{_one_line(sentences[0])} [{cid}]."
    refusal = _REFUSAL.search(system)
    return refusal.group(1).strip() if refusal else "I cannot answer based on the provided documents."


class LoopbackServer:
    """An HTTP server on 127.0.0.1 (a free port) in a daemon thread, for an OpenAI-compatible stand-in; a
    subclass gives ``_handler()``. ``base_url`` is the ``/v1`` root the openai client takes. The tests' scripted
    server derives from it too."""

    thread_name = "loopback-http"

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"the {self.thread_name} server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def start(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class GullibleLLMServer(LoopbackServer):
    """``with GullibleLLMServer({attack: payload}) as server: get_llm({..., "base_url": server.base_url})``."""

    thread_name = "gullible-llm"

    def __init__(self, instructions: Mapping[str, str]) -> None:
        super().__init__()
        self.instructions = dict(instructions)
        self.requests = 0

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002  # keep eval output clean
                return

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802  # the stdlib's name
                length = int(self.headers.get("content-length", "0"))
                try:
                    payload = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                    return
                owner.requests += 1
                content = gullible_reply(payload.get("messages", []), owner.instructions)
                self._send(200, {
                    "id": f"chatcmpl-gullible-{owner.requests}", "object": "chat.completion", "created": 0,
                    "model": payload.get("model", "gullible"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                })

        return Handler
