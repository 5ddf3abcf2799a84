"""Generation: give the (untrusted) generator the typed request for a pack, once, and keep what it sent and
returned for audit.

No retries and no repair: whatever comes back is judged by ``stages.grounding.validate``. Transport failures
(``LLMTransportError``) propagate to the flow, which turns them into a refusal with status ``error``.

>>> from contracts.generation import Generation
>>> from contracts.retrieval import ContextPack, QueryAnalysis
>>> class Echo:
...     name = "echo"
...     def generate(self, request): return Generation(text="raw")
>>> pack = ContextPack(query="q", query_analysis=QueryAnalysis(), context_text="", sources=(), chunks=(), confidence=0.0)
>>> generate_draft(pack, Echo(), GenerationPolicy()).raw_text
'raw'
"""

from __future__ import annotations

from contracts._base import content_sha256, sha256_text
from contracts.answer import DraftAnswer, GenerationPolicy
from contracts.generation import GenerationRequest
from contracts.retrieval import ContextPack
from contracts.verifier import AnswerabilityReport
from stages.generation.prompt import generation_request
from stages.grounding.answerability import close_provisions, rank_by_answerability
from stages.ports import LLM
from stages.provisions.successors import successor_answer

__all__ = ["STAGE_VERSION", "SUCCESSOR_MAP_BACKEND", "generate_draft", "draft_from_request", "llm_model_name"]

SUCCESSOR_MAP_BACKEND = "successor_map"
"""The backend named on a draft written from a successor map (a question that asks for a successor)."""

STAGE_VERSION = "generate.v1"


def llm_model_name(llm: LLM) -> str:
    """The model an LLM backend runs (its ``model`` attribute when it has one, else its name)."""
    model = getattr(llm, "model", None)
    return model if isinstance(model, str) and model else llm.name


def draft_from_request(request: GenerationRequest, llm: LLM) -> DraftAnswer:
    """One call of ``llm`` on ``request``, recorded as an untrusted DraftAnswer (request hash, prompt, text)."""
    generation = llm.generate(request)
    return DraftAnswer(
        query=request.question,
        backend=llm.name,
        model=llm_model_name(llm),
        prompt_sha256=sha256_text(generation.prompt),
        raw_text=generation.text,
        request_sha256=content_sha256(request),
        prompt=generation.prompt,
    )


def generate_draft(
    pack: ContextPack, llm: LLM, policy: GenerationPolicy, answerability: AnswerabilityReport | None = None
) -> DraftAnswer:
    """``draft_from_request`` for the request ``pack`` makes under ``policy``; with the verifier's reading
    (``answerability``) the evidence comes in answerability order and the close provisions are the verifier's
    (``stages.grounding.answerability``).

    A question that asks which provision replaced another (the pack's asked successor notes, with the successors'
    chunks in the pack) is answered from the map, not by ``llm``: one sentence per asked provision, citing its
    chunk and its successor's (``stages.provisions.successors.successor_answer``), validated like any draft."""
    mapped = successor_answer(pack) if policy.name_successors else None
    if mapped is not None:
        return DraftAnswer(query=pack.query, backend=SUCCESSOR_MAP_BACKEND, model=SUCCESSOR_MAP_BACKEND,
                           prompt_sha256=sha256_text(""), raw_text=mapped)
    if answerability is None or not answerability.verifier:
        return draft_from_request(generation_request(pack, policy), llm)
    request = generation_request(pack, policy, rank_by_answerability(answerability),
                                 close_provisions(answerability, policy))
    return draft_from_request(request, llm)
