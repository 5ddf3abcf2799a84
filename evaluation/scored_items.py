"""Every text an eval suite scores, as exclusion keys: what the verifier's training must never see.

Questions: SQuAD 2.0 dev subset (refusal, injection), HaluEval QA (hallucination), RAGTruth sample, the IPC,
NCERT and sample question sets (retrieval, questions), AILA 2019 queries, the Indian-law gold questions.
Passages: the SQuAD contexts, HaluEval knowledge and RAGTruth sources, since those suites score an answer
against exactly that passage. Statute sections are corpora the questions are asked over, not scored items:
they are not excluded (the verifier's statute pairs are built from them; its card says so).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from contracts.errors import ConfigError
from stages.training.exclusion import normalised, text_key

__all__ = ["ScoredTexts", "scored_texts"]

_REPO = Path(__file__).resolve().parent.parent
QUESTION_FILES = (
    _REPO / "bench" / "data" / "ipc_questions.jsonl",
    _REPO / "bench" / "data" / "ncert_questions.jsonl",
    _REPO / "samples" / "eval_questions.jsonl",
)


class ScoredTexts:
    """Scored questions as exclusion keys (``text_key``); scored passages as keys and as their ``normalised``
    text, one per line (for ``stages.training.exclusion.exclude_scored``)."""

    def __init__(self, questions: frozenset[str], passages: frozenset[str], passage_text: str) -> None:
        self.questions = questions
        self.passages = passages
        self.passage_text = passage_text


def _jsonl(path: Path) -> Iterator[dict]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def scored_texts(data_root: Path) -> ScoredTexts:
    """The keys of every question and passage the eval suites score, read from the shared data and the repo."""
    questions: set[str] = set()
    texts: set[str] = set()
    try:
        squad = json.loads((data_root / "squad2-dev-subset" / "dev-v2.0.json").read_text(encoding="utf-8"))
        for article in squad["data"]:
            for paragraph in article["paragraphs"]:
                texts.add(paragraph["context"])
                questions.update(text_key(qa["question"]) for qa in paragraph["qas"])
        for record in _jsonl(data_root / "halueval-qa" / "qa_one-turn_data.json"):
            questions.add(text_key(record["question"]))
            texts.add(record["knowledge"])
        for record in _jsonl(data_root / "ragtruth-sample" / "source_info.jsonl"):
            info = record.get("source_info")
            if isinstance(info, str):
                texts.add(info)
            elif isinstance(info, dict):
                questions.update(text_key(str(v)) for k, v in info.items() if k == "question")
                texts.update(str(v) for k, v in info.items() if k == "passages")
        for line in (data_root / "aila2019-statutes" / "Query_doc.txt").read_text(encoding="utf-8").splitlines():
            if "||" in line:
                questions.add(text_key(line.split("||", 1)[1]))
        gold = json.loads((data_root / "rag-indian-law-gold-qa" / "gold_dataset.json").read_text(encoding="utf-8"))
        questions.update(text_key(item["question"]) for item in gold)
        for path in QUESTION_FILES:
            questions.update(text_key(record["question"]) for record in _jsonl(path))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot read the eval data to exclude from training: {exc}") from exc
    return ScoredTexts(frozenset(questions), frozenset(text_key(t) for t in texts),
                       "\n".join(sorted(normalised(t) for t in texts)))
