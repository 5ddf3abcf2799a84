"""With the verifier reading, ordinary phrasing is no longer a missing detail; precise details still are."""

from __future__ import annotations

import pytest

from contracts.answer import GenerationPolicy
from stages.grounding.precheck import check_question_alignment
from stages.grounding.question_alignment import question_specifics
from tests.packs import IPC_379, make_chunk, make_pack

pytestmark = pytest.mark.unit

CULPABLE = ("Section 299. Culpable homicide\nWhoever causes death by doing an act with the intention of causing death, "
            "or with the intention of causing such bodily injury as is likely to cause death, or with the knowledge "
            "that he is likely by such act to cause death, commits the offence of culpable homicide.")
RASH = ("Section 304A. Causing death by negligence\nWhoever causes the death of any person by doing any rash or "
        "negligent act not amounting to culpable homicide, shall be punished with imprisonment of either "
        "description for a term which may extend to two years, or with fine, or with both.")


@pytest.mark.parametrize(("question", "chunk"), [
    ("What does the law prescribe as punishment for theft?", ("IPC_379_0", IPC_379)),
    ("How does the Code define culpable homicide?", ("IPC_299_0", CULPABLE)),
    ("A driver was careless and a pedestrian died, though he never meant to kill anyone. What offence is it?",
     ("IPC_304A_0", RASH)),
    ("Can a shopkeeper who steals from a customer be jailed under the Code?", ("IPC_379_0", IPC_379)),
])
def test_statute_worded_questions_are_not_refused_for_a_phrasing_word(question: str, chunk: tuple[str, str]) -> None:
    pack = make_pack(question, [make_chunk(*chunk)])
    verifying = check_question_alignment(pack, GenerationPolicy(verify=True))
    assert verifying.passed, verifying.detail
    words_only = check_question_alignment(pack, GenerationPolicy(verify=False))
    assert not words_only.passed and words_only.reason_code == "question_detail_missing"  # what it used to do


def test_quantities_dates_and_names_are_still_checked() -> None:
    spec = question_specifics("What did Rollo sign in 911 in eight copies?", phrasing=False)
    assert spec.names == {"rollo"} and {"911", "8"} <= set(spec.quantities)
    pack = make_pack("What is the punishment for theft of property worth 9,000 rupees?", [make_chunk("IPC_379_0", IPC_379)])
    result = check_question_alignment(pack, GenerationPolicy(verify=True))
    assert not result.passed and "9000" in result.detail
