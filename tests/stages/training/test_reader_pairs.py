"""Rule-made claims keep the section's words and change (or keep) its meaning; lay questions meet their
provision and the neighbours retrieval confused them with."""

from __future__ import annotations

import pytest

from contracts.questions import GeneratedQuestion, Provision
from flows.reader_pairs import mine_negatives
from stages.training.claim_perturb import claim_variants
from stages.training.reader_pairs import claim_pairs, question_pairs
from stages.text.units import split_sentences

PUNISH = "Whoever commits theft shall be punished with imprisonment for a term which may extend to three years, or with fine."


@pytest.mark.unit
@pytest.mark.parametrize(("sentence", "rule", "expected"), [
    (PUNISH, "or_and", "three years, and with fine."),
    (PUNISH, "extend_minimum", "which shall not be less than three years"),
    (PUNISH, "number", "extend to six years"),
    (PUNISH, "unit", "three months"),
    ("Nothing is an offence which is done by a child under seven years of age.", "negation", "Everything is an offence"),
    ("The husband shall pay maintenance to the wife every month in advance.", "parties", "The wife shall pay maintenance to the husband"),
    ("Whoever dishonestly receives any stolen property shall be punished.", "qualifier", "Whoever receives any stolen"),
    ("Whoever voluntarily causes hurt shall not be punished under this section alone.", "negation", "shall be punished under"),
])
def test_each_rule_changes_what_it_names(sentence: str, rule: str, expected: str) -> None:
    variants = {v.rule: v for v in claim_variants(sentence)}
    assert rule in variants and expected in variants[rule].claim and variants[rule].label == 0


@pytest.mark.unit
def test_the_restatement_keeps_the_meaning_and_is_labelled_supported() -> None:
    restated = {v.rule: v for v in claim_variants(PUNISH)}["restate"]
    assert restated.label == 1
    assert restated.claim == ("A person who commits theft is punishable with imprisonment for a term of up to three "
                              "years, or with fine.")


THEFT = Provision(code="IPC", section="379", title="Punishment for theft", text=PUNISH)
DEF = Provision(code="IPC", section="378", title="Theft", text="Whoever moves movable property dishonestly commits theft.")
RECV = Provision(code="IPC", section="411", title="Dishonestly receiving stolen property",
                 text="Whoever dishonestly retains any stolen property shall be punished.")


@pytest.mark.unit
def test_questions_meet_their_source_and_the_neighbours_ranked_above_it() -> None:
    q = GeneratedQuestion(question="How long can a thief be jailed for taking a bicycle?", code="IPC", section="379",
                          origin="provision", seed_sha256="0" * 64)
    ranking = {q.question: ["IPC:378", "IPC:411", "IPC:379", "IPC:380"]}
    negatives, found = mine_negatives([q], lambda question, code: ranking[question])
    assert negatives == {q.question: ("IPC:378", "IPC:411")} and found == {"below_first": 1}
    pairs = question_pairs([q], {p.key: p for p in (THEFT, DEF, RECV)}, negatives)
    assert [(p.label, p.source, p.pair.passage.split("\n")[-1][:20]) for p in pairs] == [
        (1, "reader.lay_question", PUNISH[:20]), (0, "reader.hard_negative", DEF.text[:20]),
        (0, "reader.hard_negative", RECV.text[:20])]
    first, _ = mine_negatives([q], lambda question, code: ["IPC:379", "IPC:380", "IPC:381"], depth=1)
    assert first == {q.question: ("IPC:380",)}  # ranked first: the next one down is its neighbour


@pytest.mark.unit
def test_claims_skip_held_out_sections() -> None:
    pairs = claim_pairs([THEFT, RECV], split_sentences, skip=frozenset({"IPC:379"}))
    assert pairs and {p.group for p in pairs} == {"reader:IPC:411"}
    assert {p.pair.task for p in pairs} == {"supports"}


@pytest.mark.unit
def test_a_bns_scenario_is_also_asked_of_its_ipc_predecessors() -> None:
    from stages.training.reader_pairs import with_predecessors

    q = GeneratedQuestion(question="Ravi took Meena's goat while she slept. Has Ravi committed an offence?",
                          code="BNS", section="303", origin="scenario", seed_sha256="0" * 64)
    other = q.model_copy(update={"section": "999"})
    out = with_predecessors([q, other], "BNS", {"303": ["378", "379"]}, "IPC")
    assert [(x.code, x.section) for x in out] == [("BNS", "303"), ("BNS", "999"), ("IPC", "378"), ("IPC", "379")]
    assert {x.question for x in out} == {q.question}
