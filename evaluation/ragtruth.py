"""RAGTruth sample items as citebound packs and cited answers (the hallucination suite and its test use them).

RAGTruth responses carry no citations. Each source becomes a pack: a QA source's passages one chunk each
(``RT<source>_<n>``, from its "passage n:" markers), a Summary source one chunk. Each response is cited
mechanically, its formatting kept: every sentence end (". ", "! ", "? " or the end of a line that is not a
lead-in ending in ":") gets the bracket of all the pack's ids, so only the validator's own reading of the
formatting decides. A Summary item's question is its prompt's instruction line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from contracts.errors import ConfigError
from contracts.retrieval import ContextPack
from evaluation.packs import make_chunk, make_pack

__all__ = ["RagTruthItem", "load_ragtruth", "cite_every_sentence"]

_PASSAGE = re.compile(r"passage (\d+):", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_SENTENCE_END = re.compile(r"([.!?])(?=\s|$)")


@dataclass(frozen=True)
class RagTruthItem:
    response_id: str
    task_type: str
    hallucinated: bool
    labels: tuple[str, ...]
    pack: ContextPack
    answer: str


def cite_every_sentence(response: str, ids: tuple[str, ...]) -> str:
    """The response with ``[ids]`` before each sentence's final mark and at the end of each unfinished line.

    >>> cite_every_sentence("1. Plan ahead.\\n2. Pack light", ("A",))
    '1. Plan ahead [A].\\n2. Pack light [A]'
    """
    bracket = f"[{', '.join(ids)}]"
    lines = []
    for line in response.split("\n"):
        if line.strip():
            marker = _LIST_MARKER.match(line)
            head, body = (line[: marker.end()], line[marker.end():]) if marker else ("", line)
            body = _SENTENCE_END.sub(lambda m: f" {bracket}{m.group(1)}", body.rstrip())
            if not body.endswith((bracket, ":")) and not re.search(r"\][.!?]$", body):
                body = f"{body} {bracket}"
            line = head + body
        lines.append(line)
    return "\n".join(lines)


def _chunks(source_id: str, source: dict) -> list:
    info = source["source_info"]
    if isinstance(info, str):
        return [make_chunk(f"RT{source_id}_0", info)]
    passages = _PASSAGE.split(info["passages"])
    # split() with one group: [before, n1, text1, n2, text2, ...]
    return [make_chunk(f"RT{source_id}_{n}", text.strip()) for n, text in zip(passages[1::2], passages[2::2]) if text.strip()]


def load_ragtruth(folder: Path) -> list[RagTruthItem]:
    """Every response of ``folder/response.jsonl`` with the pack of its source and its mechanical citations."""
    for name in ("source_info.jsonl", "response.jsonl"):
        if not (folder / name).is_file():
            raise ConfigError(f"RAGTruth sample file missing: {folder / name}")
    sources = {str(s["source_id"]): s for s in map(json.loads, (folder / "source_info.jsonl").read_text().splitlines()) if s}
    items = []
    for line in (folder / "response.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        source = sources[str(row["source_id"])]
        chunks = _chunks(str(row["source_id"]), source)
        info = source["source_info"]
        query = info["question"] if isinstance(info, dict) else source["prompt"].split("\n", 1)[0]
        pack = make_pack(query, chunks)
        items.append(RagTruthItem(
            response_id=str(row["id"]), task_type=source["task_type"], hallucinated=bool(row["labels"]),
            labels=tuple(label["text"] for label in row["labels"]), pack=pack,
            answer=cite_every_sentence(row["response"], tuple(c.semantic_id for c in chunks)),
        ))
    return items
