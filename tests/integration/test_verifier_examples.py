"""The issue's three questions, asked as a new user would over the whole IPC with the shipped verifier: each is
answered (no phrasing word refused as a missing detail) and cites the section that answers it."""

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


@pytest.mark.parametrize(("question", "section"), [
    ("What does the law prescribe as punishment for theft?", "IPC_379_0"),
    ("How does the Code define culpable homicide?", "IPC_299_0"),
    ("A driver was careless and a pedestrian died, though he never meant to kill anyone. What offence is it?",
     "IPC_304A_0"),
])
def test_the_issue_examples_are_answered_from_the_right_section(ipc, question: str, section: str) -> None:  # noqa: ANN001
    index, embedder = ipc
    answer, _ = answer_with_pack(question, index, embedder, RetrieveConfig(), GenerationPolicy(),
                                 get_llm({"backend": "extractive"}), verifier=get_verifier("citebound"))
    assert answer.status == "success", (answer.reason_code, answer.refusal_reason)
    assert section in {c.source_id for c in answer.citations}, answer.answer
