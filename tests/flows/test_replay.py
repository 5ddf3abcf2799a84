"""Replay: any answer stage re-run from stored artifacts; unchanged inputs give byte-identical artifacts."""

from __future__ import annotations

import pytest

from contracts import Answer, ArtifactStore
from flows.answer_flow import answer_flow
from flows.ingest_flow import ingest_flow
from flows.replay_flow import INGEST_STAGES, replay_answer, replay_flow
from tests.fakes import ScriptedLLM
from tests.fixtures.statutes import PENAL_CODE

pytestmark = [pytest.mark.integration]


@pytest.fixture
def answered(tmp_path, prefect_harness, fake_backends):
    src = tmp_path / "penal_code.txt"
    src.write_text(PENAL_CODE, encoding="utf-8")
    root = tmp_path / "store"
    ingest = ingest_flow(paths=[str(src)], doc_code="IPC", store=str(root), embedder="hash")
    answer = answer_flow(question="What is the punishment for theft?", store=str(root), embedder="hash")
    assert answer.status == "success", answer.refusal_reason
    return root, answer, ingest


def _files(st: ArtifactStore, record) -> dict[str, bytes]:
    return {s.stage: st._object_path(s.output.kind, s.output.sha256).read_bytes() for s in record.steps if s.output}


@pytest.mark.parametrize("stage", ["retrieve", "context", "generate", "validate"])
def test_replay_with_nothing_changed_is_byte_identical(answered, stage):
    root, answer, _ = answered
    st = ArtifactStore(root)
    original = st.get_run(answer.run_id)
    before = _files(st, original)
    record = replay_flow(run_id=answer.run_id, from_stage=stage, store=str(root))
    assert record.replay_of == answer.run_id and record.status == "completed"
    replayed = {s.stage: s for s in record.steps}
    assert not any(s.cached for s in record.steps if s.stage != "request")  # recomputed, not served from cache
    for name, step in replayed.items():
        if step.output is not None:
            orig = next(s for s in original.steps if s.stage == name)
            assert step.output == orig.output
            assert st._object_path(step.output.kind, step.output.sha256).read_bytes() == before[name]
    assert replay_answer(str(root), record).answer == answer.answer


def test_replay_generate_with_another_llm_writes_a_new_answer_on_the_same_pack(answered, fake_backends):
    root, answer, _ = answered
    st = ArtifactStore(root)
    original = {s.stage: s for s in st.get_run(answer.run_id).steps}
    fake_backends("other", ScriptedLLM(["I cannot answer based on the provided documents."]))
    record = replay_flow(run_id=answer.run_id, from_stage="generate", llm="other", store=str(root))
    steps = {s.stage: s for s in record.steps}
    # The pack and the verifier's reading of it (the answerability stage) are what generation is given.
    assert steps["generate"].inputs == (original["context"].output, original["answerability"].output)
    assert steps["validate"].inputs[0] == original["context"].output
    assert steps["validate"].output != original["validate"].output
    new = st.get(steps["validate"].output, Answer)
    assert new.reason_code == "model_refused"


def test_replay_with_an_override(answered):
    root, answer, _ = answered
    record = replay_flow(run_id=answer.run_id, from_stage="retrieve", overrides={"top_k": "1"}, store=str(root))
    st = ArtifactStore(root)
    retrieval = st.get(next(s for s in record.steps if s.stage == "retrieve").output)
    assert len(retrieval.results) == 1


@pytest.mark.parametrize("stage", INGEST_STAGES)
def test_ingest_replay_is_byte_identical(answered, stage):
    root, _, ingest = answered
    st = ArtifactStore(root)
    original = st.get_run(ingest.run_id)
    record = replay_flow(run_id=ingest.run_id, from_stage=stage, store=str(root))
    orig = {s.stage: s.output for s in original.steps}
    for step in record.steps:
        assert step.output == orig[step.stage]


# ------------------------------------------------------------------------------ runs that cannot be replayed


def _cli_error(capsys, argv: list[str]) -> str:
    from cli.main import main

    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "Traceback" not in captured.err and len(captured.err.strip().splitlines()) == 1, captured.err
    return captured.err.strip()


def test_replaying_a_replay_from_a_stage_it_did_not_store_is_a_one_line_error(answered, capsys):
    root, answer, _ = answered
    replay = replay_flow(run_id=answer.run_id, from_stage="generate", store=str(root))
    err = _cli_error(capsys, ["--store", str(root), "replay", replay.run_id, "--from", "validate"])
    assert err.startswith(f"citebound: run {replay.run_id} (a replay of {answer.run_id}) has no stored context output")
    assert "it has stored outputs of: request, generate, validate" in err
    assert f"replay {answer.run_id} itself" in err
    assert ArtifactStore(root).list_runs()[-1].run_id == replay.run_id  # nothing ran, no new run record


def test_replaying_a_refused_run_past_its_refusal_is_a_one_line_error(answered, capsys):
    root, _, _ = answered
    refused = answer_flow(question="What is the capital of Australia?", store=str(root), embedder="hash")
    assert refused.status != "success"
    record = ArtifactStore(root).get_run(refused.run_id)
    assert "generate" not in {s.stage for s in record.steps}
    err = _cli_error(capsys, ["--store", str(root), "replay", refused.run_id, "--from", "validate"])
    assert f"run {refused.run_id} has no stored generate output to replay validate from" in err
    assert "it has stored outputs of: request, retrieve, context, answerability, precheck" in err
    assert "replay it from retrieve or context or successors or answerability or precheck or generate" in err


def test_replaying_an_unknown_run_or_stage_is_a_one_line_error(answered, capsys):
    root, answer, _ = answered
    assert "no run 'no-such-run'" in _cli_error(capsys, ["--store", str(root), "replay", "no-such-run"])
    err = _cli_error(capsys, ["--store", str(root), "replay", answer.run_id, "--from", "chunk"])
    assert "answer runs replay from one of retrieve, context, successors, answerability, precheck, generate, validate, not 'chunk'" in err


def test_an_ingest_replay_can_itself_be_replayed_and_reaches_the_same_artifacts(answered):
    root, _, ingest = answered
    st = ArtifactStore(root)
    original = {s.stage: s.output for s in st.get_run(ingest.run_id).steps}
    first = replay_flow(run_id=ingest.run_id, from_stage="clean", store=str(root))
    second = replay_flow(run_id=first.run_id, from_stage="chunk", store=str(root))
    assert [s.stage for s in second.steps] == ["chunk", "flag", "embed"]
    assert all(step.output == original[step.stage] for step in second.steps)
