"""Verifier training pairs where an answer is the claim: HaluEval QA, MultiRC and BoolQ.

**HaluEval QA** (the 10k file): right and hallucinated answers against knowledge.

Each record has HotpotQA knowledge, a question, its right answer and an answer ChatGPT was asked to make
plausible but wrong. Per record, with fixed seeded draws:

* ``right_claim`` (1) / ``hallucinated_claim`` (0): both answers as claims (with the question) against the
  knowledge, both in the same form, drawn per record: the answer as given (``short``), or a sentence made of
  the question and the answer (``sentence``), as answers are written;
* ``question_knowledge`` (1): the question against its knowledge (HaluEval questions are answerable there);
  ``question_other_knowledge`` (0): against another record's knowledge.

**MultiRC**: a paragraph, questions, and answer options each labelled right or wrong. Each option is a claim
with its question against the passage of the paragraph that shares most words with the question and all its
options (paragraphs run longer than the model reads): ``right_option`` (1) / ``wrong_option`` (0).

**BoolQ**: a yes/no question, a passage and the answer. Both "Yes" and "No" become claims with the question,
the true one supported (1), the other not (0): ``yes_no_claim``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

from contracts.verifier import LabelledPair, VerifierPair
from stages.training.squad_pairs import _closest, paragraph_passages

__all__ = ["boolq_pairs", "claim_sentence", "halueval_pairs", "multirc_pairs"]

SOURCE = "halueval"


def claim_sentence(question: str, answer: str) -> str:
    """A sentence made mechanically of a question and its answer: "<question without '?'>: <answer>"."""
    asked = question.strip().rstrip("?").strip()
    reply = answer.strip().rstrip(".")
    if reply.lower() in ("yes", "no"):
        return f"{reply.capitalize()} — {asked[:1].lower()}{asked[1:]}."
    return f"{asked}: {reply}."


def halueval_pairs(
    records: Sequence[dict], *, seed: int, sentence_rate: float = 0.5, other_knowledge_rate: float = 0.5
) -> list[LabelledPair]:
    """Labelled pairs from HaluEval QA records (``knowledge``, ``question``, ``right_answer``,
    ``hallucinated_answer``), deterministic for a seed."""
    rng = random.Random(seed)
    out: list[LabelledPair] = []
    for n, record in enumerate(records):
        knowledge, question = record["knowledge"].strip(), record["question"].strip()
        right, wrong = record["right_answer"].strip(), record["hallucinated_answer"].strip()
        if not (knowledge and question and right and wrong):
            continue
        group = f"{SOURCE}:{n}"
        sentence = rng.random() < sentence_rate
        for answer, label, kind in ((right, 1, "right_claim"), (wrong, 0, "hallucinated_claim")):
            claim = claim_sentence(question, answer) if sentence else answer
            out.append(LabelledPair(pair=VerifierPair(task="supports", text=claim, passage=knowledge,
                                                      question=question),
                                    label=label, source=f"{SOURCE}.{kind}", group=group))
        out.append(LabelledPair(pair=VerifierPair(task="answers", text=question, passage=knowledge), label=1,
                                source=f"{SOURCE}.question_knowledge", group=group))
        if len(records) > 1 and rng.random() < other_knowledge_rate:
            other = records[(n + rng.randrange(1, len(records))) % len(records)]["knowledge"].strip()
            if other and other != knowledge:
                out.append(LabelledPair(pair=VerifierPair(task="answers", text=question, passage=other), label=0,
                                        source=f"{SOURCE}.question_other_knowledge", group=group))
    return out


def multirc_pairs(
    paragraphs: Iterable[dict], *, split_sentences: Callable[[str], list[str]], window_words: int = 180
) -> list[LabelledPair]:
    """MultiRC records (SuperGLUE form: ``passage.text``, ``passage.questions[].answers[].{text,label}``)."""
    out: list[LabelledPair] = []
    for record in paragraphs:
        text = record["passage"]["text"].replace("<br>", " ")
        passages = paragraph_passages(text, split_sentences, window_words)
        if not passages:
            continue
        for q in record["passage"]["questions"]:
            question = q["question"].strip()
            options = [a for a in q["answers"] if a["text"].strip()]
            passage = _closest(passages, " ".join([question, *(a["text"] for a in options)]))[2]
            for option in options:
                label = 1 if option["label"] else 0
                out.append(LabelledPair(
                    pair=VerifierPair(task="supports", text=option["text"].strip(), passage=passage, question=question),
                    label=label, source=f"multirc.{'right' if label else 'wrong'}_option",
                    group=f"multirc:{record['idx']}"))
    return out


def boolq_pairs(records: Iterable[dict]) -> list[LabelledPair]:
    """BoolQ records (``question``, ``passage``, ``label`` true for yes)."""
    out: list[LabelledPair] = []
    for record in records:
        question = record["question"].strip().rstrip("?") + "?"
        question = question[:1].upper() + question[1:]
        for claim in ("Yes", "No"):
            label = 1 if (claim == "Yes") == bool(record["label"]) else 0
            out.append(LabelledPair(
                pair=VerifierPair(task="supports", text=claim, passage=record["passage"].strip(), question=question),
                label=label, source="boolq.yes_no_claim", group=f"boolq:{record['idx']}"))
    return out
