"""The reader's question data: provisions read from the statutes, the prompt, and the rules that keep a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.questions import Provision
from stages.training.provisions import json_provisions, statute_provisions
from stages.training.question_writer import SYSTEM, lay_names, parse_questions, prompt_sha256, question_request

THEFT = Provision(code="BNS", section="303", title="Theft",
                  text="Whoever, intending to take dishonestly any movable property out of the possession of any "
                       "person without that person's consent, moves that property in order to such taking, is said "
                       "to commit theft.")
TREE = "A cuts down a tree on Z's ground, with the intention of dishonestly taking the tree out of Z's possession."


@pytest.mark.unit
def test_each_rule_drops_its_kind_of_line_and_keeps_a_plain_question() -> None:
    raw = "\n".join([
        "Q: My neighbour cut down a tree in my garden and took the wood. Is that stealing?",  # kept
        "Q: Is it theft?",                                                       # too_short
        "Q: Tell me about cutting trees",                                        # not_a_question
        "Q: What does section 303 of the BNS say about trees?",                  # names_the_law
        "Q: Can Z complain to the police if A took his tree?",                   # kept_letters
        "Q: What is the rule that applies to this situation?",                  # echoes_the_prompt
        "Q: What if someone moves that property in order to such taking in my village?",  # copies_the_text
        "2. My neighbour cut down a tree in my garden and took the wood. Is that stealing?",  # duplicate
    ])
    kept, dropped = parse_questions(raw, THEFT, "illustration", TREE)
    assert [q.question for q in kept] == [
        "My neighbour cut down a tree in my garden and took the wood. Is that stealing?"]
    assert [d.rule for d in dropped] == ["too_short", "not_a_question", "names_the_law", "kept_letters",
                                         "echoes_the_prompt", "copies_the_text", "duplicate"]
    assert kept[0].section == "303" and kept[0].origin == "illustration"


@pytest.mark.unit
def test_the_request_is_deterministic_and_names_no_section() -> None:
    one, two = question_request(THEFT, "illustration", TREE), question_request(THEFT, "illustration", TREE)
    assert one == two and one.temperature == 0.0 and one.seed == two.seed
    assert "303" not in one.user and lay_names(TREE) in one.user and one.system == SYSTEM
    assert "Meena's ground" in one.user and " Z" not in one.user  # the drafters' letters become names
    assert one.examples and one.examples[0][1].endswith("?")
    assert prompt_sha256("illustration") != prompt_sha256("provision")


@pytest.mark.integration
def test_the_bns_pdf_yields_its_sections_and_their_illustrations(shared_data: Path) -> None:
    import pymupdf

    with pymupdf.open(shared_data / "statute-pdfs" / "Bhartiya_Nyay_Sanhita_BNS.pdf") as doc:
        text = "\n".join(page.get_text() for page in doc)
    provisions = {p.section: p for p in statute_provisions("BNS", text)}
    assert len(provisions) >= 350  # 358 sections; a few headings wrap in ways the rule does not follow
    assert provisions["303"].title == "Theft" and any("tree" in i for i in provisions["303"].illustrations)
    assert provisions["318"].title == "Cheating" and len(provisions["318"].illustrations) >= 5
    assert sum(len(p.illustrations) for p in provisions.values()) >= 200
    # The arrangement of sections (the table of contents) is never read as sections: bodies are real text.
    assert "Whoever" in provisions["303"].text and "Illustration" not in provisions["303"].text


@pytest.mark.unit
def test_json_records_become_provisions_and_empty_ones_are_skipped() -> None:
    rows = [{"Section": 379, "section_title": "Punishment for theft", "section_desc": "Whoever commits theft ..."},
            {"Section": 380, "section_title": "x", "section_desc": "  "}]
    assert [(p.code, p.section, p.title) for p in json_provisions("IPC", rows)] == [
        ("IPC", "379", "Punishment for theft")]
