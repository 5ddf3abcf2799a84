"""Question-evidence alignment: a question whose detail no chunk carries is refused before generation."""

from __future__ import annotations

import numpy as np
import pytest

from contracts.answer import GenerationPolicy
from stages.grounding.precheck import check_question_alignment, precheck_pack
from stages.grounding.question_alignment import missing_in_passage, missing_specifics, question_specifics
from tests.fakes import ScriptedLLM
from tests.packs import IPC_379, answer_with, make_chunk, make_pack

pytestmark = pytest.mark.unit

# The lexical rules as they stand with the verifier switched off: with it on, rare words, names' phrasing and
# negation are left to the answerability gate (test_phrasing_words.py, test_answerability.py).
POLICY = GenerationPolicy(verify=False)
# Two unanswerable SQuAD 2.0 questions of dev articles (Scottish_Parliament, Warsaw) over their paragraphs.
DEBATE = ('Immediately after Decision Time a "Members Debate" is held, which lasts for 45 minutes. Members Business '
          "is a debate on a motion proposed by an MSP who is not a Scottish minister.")
PALMS = ("They have extensive botanical collection of rare domestic and foreign plants, while a palm house in the New "
         "Orangery displays plants of subtropics from all over the world.")


def test_a_changed_number_is_refused_and_the_reason_names_it() -> None:
    llm = ScriptedLLM(['The "Members Debate" lasts for 45 minutes [Scottish_Parliament_p17_0].'])
    pack = make_pack("What debate lasts for 55 minutes?", [make_chunk("Scottish_Parliament_p17_0", DEBATE)])
    answer = answer_with(pack, llm, POLICY)
    assert (answer.status, answer.reason_code, answer.refusal_reason) == ("insufficient_context", "question_detail_missing", '"55"')
    assert llm.prompts == []  # refused before generation
    same = make_pack("What debate lasts for 45 minutes?", [make_chunk("Scottish_Parliament_p17_0", DEBATE)])
    assert precheck_pack(same, POLICY) is None


def test_a_changed_rare_word_is_refused_and_named() -> None:
    pack = make_pack("Where is a palm house with tropic plants from all over the world on display?",
                     [make_chunk("Warsaw_p22_0", PALMS)])
    result = check_question_alignment(pack, POLICY)
    assert (result.passed, result.reason_code, result.detail) == (False, "question_detail_missing", '"tropic"')
    ok = make_pack("Where is a palm house with plants of subtropics from all over the world on display?",
                   [make_chunk("Warsaw_p22_0", PALMS)])
    assert check_question_alignment(ok, POLICY).passed


def test_common_words_are_left_to_paraphrase() -> None:
    # "located", "country" are common English words: the evidence may word them differently.
    pack = make_pack("In what country is Normandy located?",
                     [make_chunk("Normans_p1_0", "Normandy is a region in France.")])
    assert question_specifics(pack.query).rare == frozenset()
    assert check_question_alignment(pack, POLICY).passed


@pytest.mark.parametrize(
    ("question", "evidence", "carried"),
    [
        ("Can I be jailed for two weeks?", "imprisonment for a term of ten days or more", True),
        ("Can I be jailed for two weeks?", "imprisonment for a term of thirty days or more", False),
        ("Can I be jailed for two weeks?", "imprisonment for fourteen days", True),
        ("Is a stay of 40 days allowed?", "a stay of not more than thirty days", False),
        ("Is a stay of 20 days allowed?", "a stay of not more than thirty days", True),
        ("Who sold the rights in the 15th century?", "In 1418, Maciot sold the rights.", True),
        ("Who sold the rights in the 14th century?", "In 1418, Maciot sold the rights.", False),
        ("Who ruled in the 1000's?", "In the 10th and 11th centuries Rollo's heirs ruled.", True),
        ("Who ruled in the 1100's?", "In the 10th and 11th centuries Rollo's heirs ruled.", False),
    ],
)
def test_quantities_compare_as_quantities(question: str, evidence: str, carried: bool) -> None:
    spec = question_specifics(question)
    assert spec.quantities, question
    assert (missing_specifics(spec, evidence) == ()) is carried


def test_names_must_be_in_the_evidence_folded_and_by_initials() -> None:
    spec = question_specifics("When was Bethencourt sent to the US?")
    assert spec.names == {"bethencourt", "us"}
    assert missing_specifics(spec, "Béthencourt was sent to the United States in 1402.") == ()
    assert missing_specifics(spec, "Béthencourt was sent to Canada in 1402.") == ("us",)


def test_a_negated_question_needs_a_negated_sentence_about_it() -> None:
    text = "Article 102 prohibits the abuse of dominant position, such as price discrimination."
    assert missing_specifics(question_specifics("What does Article 102 not prohibit?"), text) == ("not",)
    negated = "Article 102 does not prohibit holding a dominant position as such."
    assert missing_specifics(question_specifics("What does Article 102 not prohibit?"), negated) == ()


def test_named_acts_and_sections_are_found_by_retrieval_not_by_text() -> None:
    spec = question_specifics("Where does the Penal Code apply under section 1?")
    assert not spec.names and not spec.quantities


def test_specifics_must_meet_in_one_passage_not_across_chunks() -> None:
    # Each detail is somewhere in the pack, but no one passage has both: a question assembled from two.
    pack = make_pack("When did Rollo marry Poppa of Bayeux?",
                     [make_chunk("Normans_p1_0", "Rollo was baptised in 912. He took land near Rouen."),
                      make_chunk("Normans_p1_1", "Poppa of Bayeux was a noblewoman. Her father was Berengar.")])
    result = check_question_alignment(pack, POLICY)
    assert not result.passed and result.reason_code == "question_detail_missing"
    assert missing_in_passage(question_specifics(pack.query), "Rollo met Poppa. He married her at Bayeux.") == ()


def test_alignment_is_switched_off_by_either_policy_flag() -> None:
    pack = make_pack("Where are tropic plants on display?", [make_chunk("Warsaw_p22_0", PALMS)])
    assert precheck_pack(pack, POLICY) is not None
    assert precheck_pack(pack, GenerationPolicy(check_alignment=False, verify=False)) is None
    assert precheck_pack(pack, GenerationPolicy(check_sufficiency=False, verify=False)) is None


class WordTableEmbedder:
    """Each word its own axis (cosine 0 with any other), except the pairs given, set at the cosine given."""

    model_name = "table"
    model_revision = "1"
    dim = 256

    def __init__(self, pairs: dict[tuple[str, str], float]) -> None:
        self.pairs = pairs
        self.calls: list[list[str]] = []

    def embed(self, texts):  # noqa: ANN001, ANN201
        self.calls.append(list(texts))
        out = np.eye(len(texts), self.dim, dtype=np.float32)
        slot = {t: i for i, t in enumerate(texts)}
        for (a, b), cos in self.pairs.items():
            if a in slot and b in slot:
                out[slot[a]] = cos * out[slot[b]] + np.sqrt(1 - cos * cos) * out[slot[a]]
        return out


def test_a_paraphrase_is_mapped_only_above_the_measured_similarity() -> None:
    question = "What is the punishment for selling pornographic books?"
    text = "Whoever sells any obscene book shall be punished with imprisonment."
    pack = make_pack(question, [make_chunk("IPC_292_0", text)], intent="punishment")
    assert check_question_alignment(pack, POLICY).detail == '"pornographic"'
    close = WordTableEmbedder({("pornographic", "obscene"): 0.61})
    assert check_question_alignment(pack, POLICY, close).passed
    far = WordTableEmbedder({("pornographic", "obscene"): 0.3})
    assert check_question_alignment(pack, POLICY, far).detail == '"pornographic"'
    # Words are embedded once per check, and not at all when the word-for-word test passes.
    assert len(far.calls) == 1
    unused = WordTableEmbedder({})
    assert check_question_alignment(make_pack("theft", [make_chunk("IPC_379_0", IPC_379)]), POLICY, unused).passed
    assert unused.calls == []


def test_rare_words_describing_conduct_are_left_to_paraphrase() -> None:
    spec = question_specifics("What is the punishment for carelessness with fire used recklessly?")
    assert spec.rare == frozenset()
    assert question_specifics("Where is a palm house with tropic plants?").rare == {"tropic"}


def test_a_number_within_a_stated_limit_is_carried() -> None:
    text = "Nothing is an offence which is done by a child above seven years of age and under twelve."
    assert missing_specifics(question_specifics("Can a child of nine be punished?"), text) == ()
    assert missing_specifics(question_specifics("Can a child of fifteen be punished?"), text) == ()  # above seven
    assert missing_specifics(question_specifics("Were there fifteen lectures?"), "There were seven lectures.") == ("15",)


def test_a_name_needs_a_closer_match_than_a_rare_term() -> None:
    pack = make_pack("What did the English words become?", [make_chunk("Normans_p1_1", "The French words became normand.")])
    swapped = WordTableEmbedder({("english", "french"): 0.64})
    assert check_question_alignment(pack, POLICY, swapped).detail == '"english"'
    assert check_question_alignment(pack, POLICY, WordTableEmbedder({("english", "french"): 0.8})).passed
