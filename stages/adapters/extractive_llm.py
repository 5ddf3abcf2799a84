"""The default backend: a deterministic, offline "LLM" that answers by quoting the evidence.

It honours the same Protocol as any LLM: it is given only the grounded prompt, parses the evidence blocks
and the question back out of it, and composes its answer from the best-supported evidence sentences,
each copied verbatim and followed by ``[semantic_id]``. When no sentence is relevant to the question it
returns exactly the refusal sentence. Because it quotes what it cites, its output passes the validator.

>>> ExtractiveLLM().generate("not a grounded prompt", 100, 0.0)
'I cannot answer based on the provided documents.'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from contracts.answer import DEFAULT_REFUSAL
from stages.injection import scan_injection
from stages.prompt import NOT_CITABLE_NOTE
from stages.sufficiency import INTENT_LANGUAGE, QUESTION_WORDS
from stages.text_units import content_words, is_meta_statement, split_sentences

__all__ = ["ExtractiveLLM", "ParsedPrompt", "parse_grounded_prompt"]

_BEGIN = re.compile(r"^<<<EVIDENCE ([0-9a-f]+) BEGIN>>>$", re.M)
_HEADER = re.compile(r"^\[([^\]\s]+)\](.*)$")
_MIN_CONTENT_WORDS = 3
_MIN_QUERY_SHARE = 0.25
_INTENT_BONUS = 1.5
_EXPANSION_WEIGHT = 0.5


@dataclass
class ParsedPrompt:
    """What the extractive backend reads back from a grounded prompt."""

    refusal: str = DEFAULT_REFUSAL
    max_sentences: int = 4
    question: str = ""
    intent: str = "general"
    related_terms: str = ""
    chunks: list[tuple[str, str]] = field(default_factory=list)
    """(semantic_id, original-line text joined by spaces), citable chunks only."""


def _field(prompt: str, name: str) -> str | None:
    match = re.search(rf"^{name}: ?(.*)$", prompt, re.M)
    return match.group(1).strip() if match else None


def parse_grounded_prompt(prompt: str) -> ParsedPrompt:
    """Parse a prompt made by ``stages.prompt.build_grounded_prompt`` (missing parts keep their defaults)."""
    parsed = ParsedPrompt()
    parsed.refusal = _field(prompt, "REFUSAL SENTENCE") or DEFAULT_REFUSAL
    max_sentences = _field(prompt, "MAXIMUM SENTENCES")
    if max_sentences and max_sentences.isdigit():
        parsed.max_sentences = max(1, int(max_sentences))
    begin = _BEGIN.search(prompt)
    if begin is None:
        return parsed
    tag = begin.group(1)
    end_marker = f"<<<EVIDENCE {tag} END>>>"
    end = prompt.find(end_marker, begin.end())
    if end < 0:
        return parsed
    current_id: str | None = None
    lines: list[str] = []
    data_prefix = f"{tag}| "
    for line in prompt[begin.end() : end].splitlines():
        if line.startswith(data_prefix):
            if current_id is not None:
                lines.append(line[len(data_prefix) :])
            continue
        header = _HEADER.match(line)
        if header:
            if current_id is not None and lines:
                parsed.chunks.append((current_id, " ".join(lines)))
            lines = []
            # A flagged chunk is shown for context only: never quoted, never cited.
            current_id = None if NOT_CITABLE_NOTE in header.group(2) else header.group(1)
    if current_id is not None and lines:
        parsed.chunks.append((current_id, " ".join(lines)))
    tail = prompt[end + len(end_marker) :]
    parsed.question = _field(tail, "QUESTION") or ""
    parsed.intent = _field(tail, "QUESTION TYPE") or "general"
    parsed.related_terms = _field(tail, "RELATED TERMS") or ""
    return parsed


def _as_quote(sentence: str) -> str:
    # Brackets inside a document would read as citations in the answer.
    return sentence.replace("[", "(").replace("]", ")").rstrip(" .;:,")


class ExtractiveLLM:
    """Deterministic extractive answerer implementing ``stages.ports.LLM`` (``name == "extractive"``).

    ``max_sentences`` overrides the prompt's MAXIMUM SENTENCES line (the policy's ``max_answer_sentences``).
    """

    model = "extractive-overlap.v1"

    def __init__(self, max_sentences: int | None = None) -> None:
        self._max_sentences = max_sentences

    @property
    def name(self) -> str:
        return "extractive"

    def generate(self, prompt: str, max_tokens: int, temperature: float) -> str:
        parsed = parse_grounded_prompt(prompt)
        query_terms = content_words(parsed.question) - QUESTION_WORDS
        if not query_terms or not parsed.chunks:
            return parsed.refusal
        expansion_terms = content_words(parsed.related_terms) - QUESTION_WORDS - query_terms
        intent_language = INTENT_LANGUAGE.get(parsed.intent)  # type: ignore[call-overload]  # unknown intent: no bonus
        needed = max(1, math.ceil(_MIN_QUERY_SHARE * len(query_terms)))
        candidates: list[tuple[float, int, str, str]] = []
        seen: set[str] = set()
        for source_id, text in parsed.chunks:
            for sentence in split_sentences(text):
                quote = _as_quote(sentence)
                words = content_words(quote)
                matched = len(words & query_terms)
                if (
                    matched < needed
                    or len(words) < _MIN_CONTENT_WORDS
                    or quote.lower() in seen
                    or parsed.refusal.lower() in quote.lower()
                    or is_meta_statement(quote)
                    or scan_injection(quote)
                    or len(split_sentences(quote)) != 1  # would be cut in two, leaving a part uncited
                ):
                    continue
                seen.add(quote.lower())
                score = matched + _EXPANSION_WEIGHT * len(words & expansion_terms)
                if intent_language is not None and parsed.intent != "general" and intent_language.search(quote):
                    score += _INTENT_BONUS
                # Ties keep evidence order (chunks come ranked), so the output is deterministic.
                candidates.append((-score, len(candidates), source_id, quote))
        if not candidates:
            return parsed.refusal
        limit = self._max_sentences or parsed.max_sentences
        chosen = sorted(candidates)[:limit]
        return "\n".join(f"{quote} [{source_id}]." for _, _, source_id, quote in chosen)

