"""Claim support: each cited sentence read by the verifier against the chunks it cites."""

from __future__ import annotations

import pytest

from contracts.answer import GenerationPolicy
from stages.grounding.validate import CHECK_ORDER, validate_answer_text
from tests.fakes import WordOverlapVerifier
from tests.packs import make_chunk, make_pack

pytestmark = pytest.mark.unit

KNOWLEDGE = ("Arthur's Magazine (1844-1846) was an American literary periodical published in Philadelphia. "
             "First for Women is a woman's magazine published by Bauer Media Group in the USA. It was started in 1989.")
PACK = make_pack("Which magazine was started first, Arthur's Magazine or First for Women?", [make_chunk("HQA_0_0", KNOWLEDGE)])
# The verifier on, at round thresholds these tests' word-overlap scores are written against.
POLICY = GenerationPolicy(verify=True, min_answerability=0.5, min_support=0.5)


def test_a_claim_the_verifier_does_not_read_as_supported_is_refused_with_its_own_reason() -> None:
    verifier = WordOverlapVerifier({"First for Women": 0.1, "Arthur's Magazine": 0.93})
    wrong = validate_answer_text("First for Women [HQA_0_0].", PACK, POLICY, verifier=verifier)
    assert wrong.status == "hallucination_detected" and wrong.reason_code == "claim_not_supported"
    (report,) = wrong.sentences
    support = next(c for c in report.checks if c.name == "claim_supported")
    assert not support.passed and "0.10" in support.detail
    right = validate_answer_text("Arthur's Magazine [HQA_0_0].", PACK, POLICY, verifier=verifier)
    assert right.status == "success"
    pair = verifier.pairs[-1]
    assert (pair.task, pair.text, pair.question, pair.passage) == ("supports", "Arthur's Magazine.", PACK.query, KNOWLEDGE)


def test_word_checks_run_first_and_name_what_they_found() -> None:
    verifier = WordOverlapVerifier({"": 0.0})
    answer = validate_answer_text("Vogue was started first [HQA_0_0].", PACK, POLICY, verifier=verifier)
    assert answer.reason_code != "claim_not_supported"  # an unsupported name is the more precise reason
    assert CHECK_ORDER.index("claim_supported") > CHECK_ORDER.index("entities_supported")


def test_policy_switch_and_no_verifier_score_nothing() -> None:
    verifier = WordOverlapVerifier({"": 0.0})
    off = validate_answer_text("First for Women [HQA_0_0].", PACK, GenerationPolicy(verify=False), verifier=verifier)
    assert off.status == "success" and verifier.calls == 0
    assert next(c for c in off.checks if c.name == "claim_supported").detail == "verifier switched off by policy"


def test_each_sentence_is_read_against_the_chunks_it_cites() -> None:
    other = make_chunk("HQA_0_1", "Vogue is an American monthly fashion magazine.")
    pack = make_pack(PACK.query, [make_chunk("HQA_0_0", KNOWLEDGE), other])
    verifier = WordOverlapVerifier({"": 0.9})
    validate_answer_text("Arthur's Magazine was started in 1844 [HQA_0_0]. Vogue is a fashion magazine [HQA_0_1].",
                         pack, POLICY, verifier=verifier)
    assert [p.passage for p in verifier.pairs] == [KNOWLEDGE, other.text] and verifier.calls == 1
