"""The verifier's training pairs: what each builder makes of small, known inputs (labels, sources, groups)."""

from __future__ import annotations

import pytest

from contracts.verifier import VerifierPair, render_pair
from stages.text.units import split_sentences
from stages.training.claim_pairs import boolq_pairs, claim_sentence, halueval_pairs, multirc_pairs
from stages.training.nli_pairs import nli_pairs, sufficiency_pairs
from stages.training.selection_pairs import review_pairs, sentence_selection_pairs
from stages.training.squad_pairs import mrqa_as_squad, paragraph_passages, squad_pairs, swap_detail
from stages.training.statute_pairs import StatuteSection, statute_pairs, title_questions

pytestmark = pytest.mark.unit

PARA = ("The Normans were the people who in the 10th and 11th centuries gave their name to Normandy, a region in "
        "France. They were descended from Norse raiders and pirates from Denmark, Iceland and Norway. Their leader "
        "Rollo agreed to swear fealty to King Charles III of West Francia.")
OTHER = "The Eiffel Tower was completed in 1889. It is in Paris and was built by Gustave Eiffel's company."
ARTICLES = [
    {"title": "Normans", "paragraphs": [
        {"context": PARA, "qas": [
            {"question": "In what country is Normandy located?", "is_impossible": False,
             "answers": [{"text": "France", "answer_start": PARA.index("France")}]},
            {"question": "Who gave their name to Normandy in the 1000's and 1100's?", "is_impossible": False,
             "answers": [{"text": "The Normans", "answer_start": 0}]},
            {"question": "Who did King Charles III swear fealty to?", "is_impossible": True, "answers": [],
             "plausible_answers": [{"text": "Rollo", "answer_start": PARA.index("Rollo")}]},
        ]},
        {"context": "Norman architecture typically stands out as a new stage in the architectural history of the "
                    "regions they subdued.", "qas": []},
    ]},
    {"title": "Eiffel", "paragraphs": [{"context": OTHER, "qas": [
        {"question": "When was the Eiffel Tower completed?", "is_impossible": False,
         "answers": [{"text": "1889", "answer_start": OTHER.index("1889")}]}]}]},
]


def _by(pairs, source):  # noqa: ANN001, ANN202
    return [p for p in pairs if p.source == source]


def test_passages_are_whole_sentences_within_the_window() -> None:
    passages = paragraph_passages(PARA, split_sentences, window_words=20)
    assert len(passages) >= 2
    for start, end, text in passages:
        assert PARA[start:end] == text and text.rstrip().endswith(".")
    assert " ".join(t for *_, t in passages).split() == PARA.split()


def test_squad_labels_answerable_passages_1_and_unanswerable_ones_0() -> None:
    pairs = squad_pairs(ARTICLES, seed=7, split_sentences=split_sentences, other_passage_rate=1.0, sentence_rate=1.0,
                        claim_rate=1.0)
    positives = _by(pairs, "squad2.answer_passage")
    assert {p.label for p in positives} == {1} and len(positives) == 3
    assert all(p.pair.task == "answers" and "France" in p.pair.passage for p in positives
               if p.pair.text.startswith("In what country"))
    (unanswerable,) = _by(pairs, "squad2.unanswerable_passage")
    assert unanswerable.label == 0 and "Rollo" in unanswerable.pair.passage
    claims = _by(pairs, "squad2.answer_claim")
    assert claims and all(c.label == 1 and c.pair.question and c.pair.task == "supports" for c in claims)
    for other in _by(pairs, "squad2.other_passage"):
        assert other.label == 0
    assert {p.group for p in pairs} == {"squad2:Normans", "squad2:Eiffel"}


def test_squad_pairs_are_deterministic_for_a_seed() -> None:
    a = squad_pairs(ARTICLES, seed=3, split_sentences=split_sentences)
    b = squad_pairs(ARTICLES, seed=3, split_sentences=split_sentences)
    assert a == b


def test_swapped_detail_makes_the_question_unanswerable_from_its_passage() -> None:
    import random

    swapped = swap_detail("Who did Rollo swear fealty to?", PARA, ["Gustave", "Paris"], random.Random(1))
    assert swapped is not None and "Rollo" not in swapped and any(w in swapped for w in ("Gustave", "Paris"))
    assert swap_detail("who did they swear to?", PARA, ["Paris"], random.Random(1)) is None


def test_halueval_right_claim_supported_hallucinated_not() -> None:
    record = {"knowledge": "Arthur's Magazine (1844-1846) was an American literary periodical.",
              "question": "Which magazine was started first?", "right_answer": "Arthur's Magazine",
              "hallucinated_answer": "First for Women was started first."}
    pairs = halueval_pairs([record, {**record, "knowledge": "Other text."}], seed=1, sentence_rate=1.0)
    right = _by(pairs, "halueval.right_claim")[0]
    wrong = _by(pairs, "halueval.hallucinated_claim")[0]
    assert (right.label, wrong.label) == (1, 0)
    assert right.pair.text == claim_sentence(record["question"], "Arthur's Magazine")
    assert render_pair(right.pair)[0].startswith("Which magazine was started first?")
    assert claim_sentence("Is it?", "yes") == "Yes — is it."


def test_statute_questions_pair_with_own_section_1_and_neighbours_0() -> None:
    act = [StatuteSection("ipc", "378", "Theft", "Whoever, intending to take dishonestly any movable property ..."),
           StatuteSection("ipc", "379", "Punishment for theft", "Whoever commits theft shall be punished ..."),
           StatuteSection("ipc", "380", "Theft in dwelling house, etc.", "Whoever commits theft in any building ...")]
    pairs = statute_pairs([act], seed=5, questions_per_section=1, drop_heading_rate=0.0)
    own = [p for p in pairs if p.label == 1 and p.group == "statutes:ipc:379"]
    assert own and all("Punishment for theft" in p.pair.passage for p in own)
    negatives = [p for p in pairs if p.label == 0 and p.group == "statutes:ipc:379"]
    assert {n.pair.passage.split("\n")[0] for n in negatives} >= {"Section 378. Theft"}
    assert title_questions("Punishment for theft")[0] == "What is the punishment for theft?"


def test_nli_entailment_is_supported_neutral_and_contradiction_are_not() -> None:
    pairs = nli_pairs([("A man sleeps.", "A person sleeps.", "entailment"), ("A man sleeps.", "He dreams.", "neutral"),
                       ("A man sleeps.", "He runs.", "contradiction"), ("x", "y", "bogus")], source="nli.t")
    assert [p.label for p in pairs] == [1, 0, 0]
    assert pairs[0].pair == VerifierPair(task="supports", text="A person sleeps.", passage="A man sleeps.")


def test_sufficiency_minimal_pairs() -> None:
    record = {"claim": "Unison was released by Atlantic Records.", "evidence": [["Unison", "The album was released."]],
              "label_before": "SUPPORTS", "label_after": "NOT ENOUGH",
              "text_orig": '[[Unison]] The album was released <span style="color:red;">by Atlantic Records</span> .'}
    full, reduced = sufficiency_pairs([record], source="sf")
    assert (full.label, reduced.label) == (1, 0)
    assert "Atlantic Records" in full.pair.passage and "Atlantic" not in reduced.pair.passage


def test_selection_reviews_multirc_boolq_mrqa() -> None:
    rows = sentence_selection_pairs([("q?", "an answer.", True), ("q?", "not one.", False)], source="wikiqa")
    assert [(p.label, p.source) for p in rows] == [(1, "wikiqa.answer_sentence"), (0, "wikiqa.other_sentence")]
    reviews = review_pairs([("How is the battery?", "The battery lasts two days. Screen is fine.", "lasts two days"),
                            ("Is it red?", "The battery lasts two days.", None)], source="subjqa",
                           split_sentences=split_sentences)
    assert [p.label for p in reviews] == [1, 0]
    multirc = multirc_pairs([{"idx": 0, "passage": {"text": PARA, "questions": [
        {"question": "Where is Normandy?", "answers": [{"text": "France", "label": 1}, {"text": "Spain", "label": 0}]}]}}],
        split_sentences=split_sentences)
    assert [(p.label, p.pair.text) for p in multirc] == [(1, "France"), (0, "Spain")]
    boolq = boolq_pairs([{"question": "is paris in france", "passage": "Paris is in France.", "label": True, "idx": 1}])
    assert [(p.pair.text, p.label) for p in boolq] == [("Yes", 1), ("No", 0)]
    assert boolq[0].pair.question == "Is paris in france?"
    squad = mrqa_as_squad([{"header": {}}, {"context": "Ray died of a heart attack.", "qas": [
        {"question": "Why did Ray die?", "detected_answers": [{"text": "heart attack", "char_spans": [[13, 24]]}]}]}], "re")
    assert squad[0]["paragraphs"][0]["qas"][0]["answers"] == [{"text": "heart attack", "answer_start": 13}]
