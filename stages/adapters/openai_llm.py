"""The ``openai`` backend: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama,
``python -m llama_cpp.server``...).

One request per answer, ``max_retries=0``: no retries on transport, none on content. Every failure — the
server unreachable, a timeout, an HTTP error, a body that is not a chat completion — becomes
``LLMTransportError`` with a clear message; the flow turns it into a refusal with status ``error``.

>>> OpenAILLM("m", base_url="http://127.0.0.1:9/v1").name
'openai'
"""

from __future__ import annotations

from typing import Any

from contracts.errors import LLMTransportError
from contracts.generation import Generation, GenerationRequest
from contracts.questions import CompletionRequest
from stages.generation.prompt import prompt_messages, render_prompt

__all__ = ["OpenAILLM"]


class OpenAILLM:
    """Implements ``stages.ports.LLM`` and ``stages.ports.TextGenerator`` over the ``openai`` client's chat completions.

    ``api_key=None`` sends a placeholder key (local servers ignore it); the flows pass the real key from
    settings. ``base_url=None`` means the client's default (api.openai.com).
    """

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key: str | None = None, timeout: float = 60.0
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self._api_key = api_key if api_key is not None else "not-needed"
        self._client: Any = None  # built on first use: importing openai costs ~0.3 s

    @property
    def name(self) -> str:
        return "openai"

    def _get_client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
        return self._client

    def generate(self, request: GenerationRequest) -> Generation:
        """One chat completion: the rules as the system message, the datamarked evidence and the question as
        the user message (``stages.generation.prompt``), the policy's temperature and token limit."""
        system, user = prompt_messages(request)
        text = self._chat(system, user, temperature=request.policy.temperature,
                          max_tokens=request.policy.max_tokens)
        return Generation(text=text, prompt=render_prompt(request))

    def complete(self, request: CompletionRequest) -> Generation:
        """One chat completion for data making (``stages.ports.TextGenerator``): the request's own messages,
        temperature, seed and token limit."""
        shots = [turn for asked, reply in request.examples
                 for turn in ({"role": "user", "content": asked}, {"role": "assistant", "content": reply})]
        text = self._chat(request.system, request.user, temperature=request.temperature,
                          max_tokens=request.max_tokens, seed=request.seed, examples=shots)
        shown = "".join(f"\n\n{asked}\n{reply}" for asked, reply in request.examples)
        return Generation(text=text, prompt=f"{request.system}{shown}\n\n{request.user}")

    def _chat(self, system: str, user: str, *, temperature: float, max_tokens: int, seed: int | None = None,
              examples: list[dict[str, str]] | None = None) -> str:
        import openai

        where = f"{self.base_url or 'api.openai.com'} (model {self.model})"
        extra = {"seed": seed} if seed is not None else {}
        try:
            response = self._get_client().chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, *(examples or []),
                          {"role": "user", "content": user}],
                temperature=temperature,
                max_tokens=max_tokens,
                **extra,
            )
        except openai.APITimeoutError as exc:
            raise LLMTransportError(f"LLM server {where} did not answer within {self.timeout:g} s") from exc
        except openai.APIConnectionError as exc:
            raise LLMTransportError(f"cannot reach LLM server {where}: {exc}") from exc
        except openai.APIStatusError as exc:
            raise LLMTransportError(f"LLM server {where} answered HTTP {exc.status_code}: {exc.message}") from exc
        except (openai.APIError, ValueError, TypeError) as exc:
            raise LLMTransportError(f"LLM server {where} sent a malformed response: {exc}") from exc
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise LLMTransportError(f"LLM server {where} sent a response with no choices: {str(response)[:200]!r}")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str):
            raise LLMTransportError(f"LLM server {where} sent a choice without text content")
        return content
