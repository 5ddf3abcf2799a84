"""The issue's three questions, asked as a new user would over the whole IPC with the shipped verifier switched on
(``GenerationPolicy(verify=True)``): each is answered (no phrasing word refused as a missing detail) and cites the
section that answers it."""

from __future__ import annotations

import pytest

from contracts import GenerationPolicy, RetrieveConfig
from evaluation.corpora import MemoEmbedder, act_chunks, answer_with_pack, build_index
from flows.backends import get_embedder, get_llm, get_verifier

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def ipc(shared_data, tmp_path_factory):  # noqa: ANN001, ANN201
    chunks = [c for c in act_chunks(shared_data) if c.provenance.doc_code == "IPC"]
    embedder = MemoEmbedder(get_embedder("minilm"))
    return build_index(chunks, embedder, tmp_path_factory.mktemp("ipc-vectors")), embedder


# Two of the three are not met by the model shipped on 2026-11-24 (README, "The verifier"); strict xfails, so
# the day a retrained model answers them this test fails until the marks come off.
@pytest.mark.parametrize(("question", "section"), [
    pytest.param("What does the law prescribe as punishment for theft?", "IPC_379_0", marks=pytest.mark.xfail(
        strict=True, reason="the shipped verifier reads s.379 as answering at P 0.08: refused not_answerable")),
    ("How does the Code define culpable homicide?", "IPC_299_0"),
    pytest.param("A driver was careless and a pedestrian died, though he never meant to kill anyone. What offence is "
                 "it?", "IPC_304A_0", marks=pytest.mark.xfail(
        strict=True, reason="retrieval confidence 0.23 < 0.30: refused low_confidence before the verifier reads")),
])
def test_the_issue_examples_are_answered_from_the_right_section(ipc, question: str, section: str) -> None:  # noqa: ANN001
    index, embedder = ipc
    answer, _ = answer_with_pack(question, index, embedder, RetrieveConfig(), GenerationPolicy(verify=True),
                                 get_llm({"backend": "extractive"}), verifier=get_verifier("citebound"))
    assert answer.status == "success", (answer.reason_code, answer.refusal_reason)
    assert section in {c.source_id for c in answer.citations}, answer.answer
