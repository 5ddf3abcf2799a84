"""Verifier training pairs from SQuAD 2.0 (train split): answerability of passages and sentences, and claims.

SQuAD 2.0 pairs crowd-written questions with Wikipedia paragraphs; a third of them are written to look
answerable from their paragraph but are not (a detail changed: the hardest kind of negative for a reader).
Each paragraph is cut into passages of at most ``window_words`` words at sentence ends, about the size of a
citebound chunk. Per question, with fixed seeded draws:

* ``answer_passage`` (1): the passage holding the answer; ``other_passage`` (0): a passage of another paragraph
  of the same article, such as retrieval brings back beside the right one;
* ``unanswerable_passage`` (0): an unanswerable question against the passage holding its plausible answer;
* ``answer_sentence`` (1) / ``other_sentence`` (0) / ``unanswerable_sentence`` (0): the same at sentence level,
  how the extractive answerer picks what to quote;
* ``answer_claim`` (1): the gold answer as a claim (with its question) against its passage;
  ``wrong_answer_claim`` (0): another question's answer from the same paragraph as this question's answer;
  ``unanswerable_claim`` (0): an unanswerable question's plausible answer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from contracts.verifier import LabelledPair, VerifierPair

__all__ = ["paragraph_passages", "squad_pairs"]

SOURCE = "squad2"


def paragraph_passages(
    context: str, split_sentences: Callable[[str], list[str]], window_words: int
) -> list[tuple[int, int, str]]:
    """(start, end, text) passages of a paragraph: whole sentences packed up to ``window_words`` words.

    Offsets index ``context``; a sentence longer than the window is a passage of its own.
    """
    spans: list[tuple[int, int]] = []
    cursor = 0
    for sentence in split_sentences(context):
        first = sentence.split()[0] if sentence.split() else ""
        start = context.find(first, cursor) if first else -1
        if start < 0:
            continue
        end = start
        for word in sentence.split():
            found = context.find(word, end)
            if found < 0:
                break
            end = found + len(word)
        spans.append((start, end))
        cursor = end
    if not spans:
        return [(0, len(context), context)] if context.strip() else []
    passages: list[tuple[int, int, str]] = []
    group_start, group_end, words = spans[0][0], spans[0][1], len(context[spans[0][0]:spans[0][1]].split())
    for start, end in spans[1:]:
        n = len(context[start:end].split())
        if words + n > window_words:
            passages.append((group_start, group_end, context[group_start:group_end]))
            group_start, words = start, 0
        group_end = end
        words += n
    passages.append((group_start, group_end, context[group_start:group_end]))
    return passages


def _sentence_spans(context: str, split_sentences: Callable[[str], list[str]]) -> list[tuple[int, int, str]]:
    return paragraph_passages(context, split_sentences, window_words=0)


def _holding(spans: Sequence[tuple[int, int, str]], offset: int) -> tuple[int, int, str] | None:
    for span in spans:
        if span[0] <= offset < span[1]:
            return span
    return None


_WORDS = re.compile(r"[A-Za-z0-9]+")
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
_NUMBER = re.compile(r"\b\d{1,4}\b")


def _closest(spans: Sequence[tuple[int, int, str]], question: str) -> tuple[int, int, str]:
    asked = {w.lower() for w in _WORDS.findall(question)}
    return max(spans, key=lambda s: len(asked & {w.lower() for w in _WORDS.findall(s[2])}))


def foreign_words(articles: Sequence[dict], article: dict, rng: random.Random) -> list[str]:
    """Capitalised words of another article (seeded choice): names that cannot be in this one's passages."""
    others = [a for a in articles if a is not article]
    if not others:
        return []
    other = rng.choice(others)
    text = " ".join(p["context"] for p in other["paragraphs"][:5])
    return sorted(set(_NAME.findall(text)))


def swap_detail(question: str, passage: str, foreign: Sequence[str], rng: random.Random) -> str | None:
    """The question with one of its details that the passage states swapped for one it does not: a name
    (not the first word) for a name from another article, or a number for another number. SQuAD 2.0's
    writers made many unanswerable questions this way; this makes more from answerable ones. None when the
    question has no such detail."""
    names = [m for m in _NAME.finditer(question) if m.start() > 0 and m.group() in passage]
    numbers = [m for m in _NUMBER.finditer(question) if m.group() in passage]
    candidates = [(m, "name") for m in names] + [(m, "number") for m in numbers]
    if not candidates:
        return None
    match, kind = rng.choice(candidates)
    if kind == "name":
        options = [w for w in foreign if w not in passage and w.lower() not in question.lower()]
        if not options:
            return None
        replacement = rng.choice(options)
    else:
        value = int(match.group())
        replacement = str(value + rng.choice((-1, 1)) * rng.randint(1, max(2, value // 10 or 2)))
        if replacement in passage or replacement.startswith("-"):
            return None
    return question[: match.start()] + replacement + question[match.end():]


def squad_pairs(
    articles: Sequence[dict],
    *,
    seed: int,
    source: str = SOURCE,
    split_sentences: Callable[[str], list[str]],
    window_words: int = 150,
    other_passage_rate: float = 0.35,
    sentence_rate: float = 0.5,
    claim_rate: float = 0.4,
    swap_rate: float = 1.0,
) -> list[LabelledPair]:
    """Labelled pairs from SQuAD 2.0 articles (the JSON's ``data`` list), deterministic for a seed."""
    rng = random.Random(seed)
    out: list[LabelledPair] = []

    def add(task: str, text: str, passage: str, label: int, kind: str, group: str, question: str = "") -> None:
        if text.strip() and passage.strip():
            out.append(LabelledPair(pair=VerifierPair(task=task, text=text, passage=passage, question=question),
                                    label=label, source=f"{source}.{kind}", group=group))

    for article in articles:
        group = f"{source}:{article['title']}"
        paragraphs = [p for p in article["paragraphs"] if p["context"].strip()]
        passages = [paragraph_passages(p["context"], split_sentences, window_words) for p in paragraphs]
        for pi, paragraph in enumerate(paragraphs):
            context = paragraph["context"]
            sentences = _sentence_spans(context, split_sentences)
            answers_here = [a["text"] for qa in paragraph["qas"] for a in qa.get("answers", [])[:1]]
            for qa in paragraph["qas"]:
                question = qa["question"].strip()
                if qa.get("is_impossible"):
                    plausible = (qa.get("plausible_answers") or [{}])[0]
                    if "answer_start" in plausible:
                        passage = _holding(passages[pi], plausible["answer_start"]) or passages[pi][0]
                        sentence = _holding(sentences, plausible["answer_start"])
                        claim = plausible.get("text", "")
                    else:
                        # No plausible span recorded: the passage and sentence sharing most of the question's
                        # words stand in for it (what a lexical retriever would bring back), and another
                        # question's answer from the paragraph is the claim.
                        passage = _closest(passages[pi], question)
                        sentence = _closest(sentences, question) if sentences else None
                        claim = rng.choice(answers_here) if answers_here else ""
                    add("answers", question, passage[2], 0, "unanswerable_passage", group)
                    if sentence and rng.random() < sentence_rate:
                        add("answers", question, sentence[2], 0, "unanswerable_sentence", group)
                    if claim and rng.random() < claim_rate:
                        add("supports", claim, passage[2], 0, "unanswerable_claim", group, question)
                    continue
                if not qa.get("answers"):
                    continue
                answer = qa["answers"][0]
                offset, gold = answer["answer_start"], answer["text"]
                passage = _holding(passages[pi], offset)
                if passage is None or gold not in passage[2]:
                    continue
                add("answers", question, passage[2], 1, "answer_passage", group)
                if rng.random() < swap_rate:
                    swapped = swap_detail(question, passage[2], foreign_words(articles, article, rng), rng)
                    if swapped:
                        add("answers", swapped, passage[2], 0, "swapped_question", group)
                others = [k for k in range(len(paragraphs)) if k != pi]
                if rng.random() < other_passage_rate:
                    if others:
                        other = rng.choice(passages[rng.choice(others)])
                    else:
                        # A one-paragraph article (TyDi, PolicyQA): a passage of another article.
                        stranger = articles[rng.randrange(len(articles))]
                        other = (0, 0, stranger["paragraphs"][0]["context"] if stranger is not article else "")
                    if other[2] and gold.lower() not in other[2].lower():
                        add("answers", question, other[2], 0, "other_passage", group)
                if rng.random() < sentence_rate:
                    sentence = _holding(sentences, offset)
                    if sentence and gold in sentence[2]:
                        add("answers", question, sentence[2], 1, "answer_sentence", group)
                    golds = {a["text"].lower() for a in qa["answers"]}
                    rest = [s for s in sentences if not any(g in s[2].lower() for g in golds)]
                    if rest:
                        add("answers", question, rng.choice(rest)[2], 0, "other_sentence", group)
                if rng.random() < claim_rate:
                    add("supports", gold, passage[2], 1, "answer_claim", group, question)
                    golds = {a["text"].lower() for a in qa["answers"]}
                    wrong = [a for a in answers_here if a.lower() not in golds and not any(
                        a.lower() in g or g in a.lower() for g in golds)]
                    if wrong:
                        add("supports", rng.choice(wrong), passage[2], 0, "wrong_answer_claim", group, question)
    return out


def mrqa_as_squad(records: Sequence[dict], title: str) -> list[dict]:
    """MRQA records (``context``, ``qas[].answers``, ``detected_answers[].char_spans``) as SQuAD articles,
    one paragraph each, so ``squad_pairs`` reads them."""
    articles = []
    for n, record in enumerate(records):
        if "context" not in record:
            continue  # the header line
        qas = []
        for qa in record["qas"]:
            spans = [(d["text"], d["char_spans"][0][0]) for d in qa.get("detected_answers", []) if d.get("char_spans")]
            if spans:
                qas.append({"question": qa["question"], "answers": [{"text": t, "answer_start": s} for t, s in spans],
                            "is_impossible": False})
        if qas:
            articles.append({"title": f"{title}-{n}", "paragraphs": [{"context": record["context"], "qas": qas}]})
    return articles
