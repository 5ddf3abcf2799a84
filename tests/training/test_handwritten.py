"""The hand-written question set: read with problems named, golds checked, eval items kept out, splits stable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contracts.handwritten import HandwrittenQuestion
from training.handwritten import check_gold, drop_eval_items, read_slices, split

pytestmark = pytest.mark.unit


def _q(qid: str, question: str, *, code: str = "IPC", section: str | None = "379", kind: str = "lay") -> dict:
    return {"id": qid, "question": question, "kind": kind, "code": code, "section": section, "sounds_like": None,
            "facts": [], "writer": "t"}


def test_slices_are_read_in_order_and_each_bad_line_is_named(tmp_path: Path):
    (tmp_path / "a.jsonl").write_text("\n".join([
        json.dumps(_q("ipc-379-1", "Someone took my cycle from the gate, what can happen to him?")),
        "{not json",
        json.dumps(_q("ipc-379-2", "A no-answer with a gold section is wrong", kind="no_answer")),
        json.dumps(_q("ipc-379-1", "The same id again, with another question text")),
    ]) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(_q("bns-303-1", "My scooter was stolen from the market, is that a crime?",
                                                    code="BNS", section="303")) + "\n")
    questions, problems = read_slices(tmp_path)
    assert [q.id for q in questions] == ["ipc-379-1", "bns-303-1"]
    assert [p.split(":")[:2] for p in problems] == [["a.jsonl", "2"], ["a.jsonl", "3"], ["a.jsonl", "4"]]
    assert "repeated" in problems[2]


def test_a_gold_section_the_code_does_not_have_is_dropped_and_counted():
    qs = [HandwrittenQuestion.model_validate(_q("q-a", "Is it theft if my cousin took my phone for a day?")),
          HandwrittenQuestion.model_validate(_q("q-b", "Is it theft if my cousin took my phone for a week?", section="999")),
          HandwrittenQuestion.model_validate(_q("q-c", "How do I get bail for my cousin after a fight?", section=None,
                                                kind="no_answer")),
          HandwrittenQuestion.model_validate(_q("q-d", "Is taking a goat from a field theft under that Act?", code="XYZ"))]
    kept, dropped = check_gold(qs, {"IPC": {"379", "378"}})
    assert [q.id for q in kept] == ["q-a", "q-c"]
    assert dropped == {"gold section not in the code's text": 1, "code XYZ not read": 1}


def test_eval_items_and_light_rewordings_of_them_never_reach_training():
    scored = ["What is the punishment for stealing a bicycle from outside a house?"]
    qs = [HandwrittenQuestion.model_validate(_q("q-a", "what is the punishment for stealing a bicycle from outside a house")),
          HandwrittenQuestion.model_validate(_q("q-b", "What is the punishment for stealing a bicycle from outside my house?")),
          HandwrittenQuestion.model_validate(_q("q-c", "My neighbour's boy rode off on my scooter and kept it. Crime?"))]
    kept, dropped = drop_eval_items(qs, scored)
    assert [q.id for q in kept] == ["q-c"]
    assert dropped == {"an eval item, word for word": 1, "opens as an eval item does": 1}
    reworded = HandwrittenQuestion.model_validate(_q("q-e", "Punishment for stealing a bicycle from outside a house?"))
    assert drop_eval_items([reworded], scored)[1] == {"a near copy of an eval item": 1}
    # The same story, then another ending: a twin too.
    twin = HandwrittenQuestion.model_validate(_q("q-d", "What is the punishment for stealing a bicycle from outside "
                                                        "a house at night when the owner is asleep inside?"))
    assert drop_eval_items([twin], scored)[1] == {"opens as an eval item does": 1}


def test_splits_are_stable_and_unseen_codes_stay_whole():
    qs = [HandwrittenQuestion.model_validate(_q(f"ipc-1-{i}", f"Question number {i} about a stolen phone here"))
          for i in range(400)]
    qs.append(HandwrittenQuestion.model_validate(_q("hma-5-1", "Can I marry my cousin under Hindu law?",
                                                    code="Hindu Marriage Act", section="5")))
    first = split(qs, seed=7, dev_share=0.2, unseen_codes=("Hindu Marriage Act",))
    assert [q.id for q in first["unseen"]] == ["hma-5-1"]
    assert 0.14 < len(first["dev"]) / 400 < 0.26
    # Adding questions never moves one already placed; another seed draws another split.
    more = split([*qs, HandwrittenQuestion.model_validate(_q("ipc-2-1", "Another new question on a stolen bag"))],
                 seed=7, dev_share=0.2, unseen_codes=("Hindu Marriage Act",))
    assert {q.id for q in first["dev"]} <= {q.id for q in more["dev"]}
    assert {q.id for q in split(qs, seed=8, dev_share=0.2, unseen_codes=())["dev"]} != {q.id for q in first["dev"]}


def test_the_committed_set_reads_without_problems_and_every_gold_is_in_its_code(shared_data: Path):
    from training.reader_bundle import read_code_sections
    from training.reader_prepare import HANDWRITTEN

    from training.reader_bundle import TEXTBOOK_CODE

    questions, problems = read_slices(HANDWRITTEN)
    assert problems == [] and len(questions) >= 5000
    questions = [q for q in questions if not TEXTBOOK_CODE.match(q.code)]  # their gold is a sentence, not a section
    codes = sorted({q.code for q in questions})
    sections = read_code_sections(shared_data, codes)
    kept, dropped = check_gold(questions, {c: {s for s, _, _ in rows} for c, rows in sections.items()})
    assert sum(dropped.values()) <= len(questions) // 100, dropped


def test_a_starred_unseen_code_holds_out_a_whole_book():
    qs = [HandwrittenQuestion.model_validate(_q(f"{code}-1", "What is a monsoon and when does it come?", code=code,
                                                section="text", kind="student")) for code in ("kegy203", "jesc101")]
    assert [q.code for q in split(qs, seed=1, dev_share=0.0, unseen_codes=("kegy*",))["unseen"]] == ["kegy203"]
