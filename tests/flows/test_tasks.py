"""Tasks called through ``.fn`` (no Prefect server): stage caching by (inputs, config, STAGE_VERSION)."""

from __future__ import annotations

import pytest

from contracts import (
    AnswerRequest,
    ChunkConfig,
    ChunkSet,
    CleanConfig,
    ExtractConfig,
    GenerationPolicy,
    IngestError,
    RetrieveConfig,
)
from flows.tasks import (
    chunk_task,
    clean_task,
    context_task,
    extract_task,
    flag_task,
    request_task,
    run_stage,
    source_task,
)
from flows.stage_versions import StageVersion
from tests.fixtures.statutes import PENAL_CODE, PLANTED

pytestmark = pytest.mark.unit


def test_run_stage_computes_once_then_serves_the_cache(store):
    calls = []

    def compute():
        calls.append(1)
        return GenerationPolicy(min_confidence=0.5)

    src = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    v1 = StageVersion(stage="s", label="s.v1", code="1" * 64)
    first = run_stage(store, stage="s", version=v1, config={"a": 1}, inputs=(src,), compute=compute)
    second = run_stage(store, stage="s", version=v1, config={"a": 1}, inputs=(src,), compute=compute)
    assert (first.cached, second.cached, len(calls)) == (False, True, 1)
    assert first.output == second.output
    assert (second.stage_version, second.code_version) == ("s.v1", "1" * 64)
    other_cfg = run_stage(store, stage="s", version=v1, config={"a": 2}, inputs=(src,), compute=compute)
    other_label = run_stage(store, stage="s", version=StageVersion("s", "s.v2", "1" * 64), config={"a": 1},
                            inputs=(src,), compute=compute)
    other_code = run_stage(store, stage="s", version=StageVersion("s", "s.v1", "2" * 64), config={"a": 1},
                           inputs=(src,), compute=compute)
    assert not other_cfg.cached and not other_label.cached and not other_code.cached and len(calls) == 4
    # The same output from other code keeps its address (code_version is provenance, not identity).
    assert other_code.output == first.output
    forced = run_stage(store, stage="s", version=v1, config={"a": 1}, inputs=(src,), compute=compute, force=True)
    assert not forced.cached and forced.output == first.output and len(calls) == 5


def test_run_stage_without_inputs_must_be_forced(store):
    with pytest.raises(ValueError, match="no input artifacts"):
        run_stage(store, stage="s", version=StageVersion("s", "s.v1", "1" * 64), config={}, inputs=(),
                  compute=GenerationPolicy)


def test_a_failing_stage_writes_nothing(store):
    src = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    before = sorted(p for p in store.root.rglob("*") if p.is_file())

    def boom():
        raise RuntimeError("stage failed")

    with pytest.raises(RuntimeError):
        run_stage(store, stage="s", version=StageVersion("s", "s.v1", "1" * 64), config={}, inputs=(src,),
                  compute=boom)
    assert sorted(p for p in store.root.rglob("*") if p.is_file()) == before


def test_ingest_tasks_chain_and_cache(store, tmp_path):
    f = tmp_path / "penal.txt"
    f.write_text(PENAL_CODE, encoding="utf-8")
    root = str(store.root)
    src = source_task.fn(root, str(f), "IPC", "t", "p")
    ext = extract_task.fn(root, src.output, ExtractConfig())
    cln = clean_task.fn(root, ext.output, CleanConfig())
    chk = chunk_task.fn(root, cln.output, ChunkConfig())
    flg = flag_task.fn(root, chk.output)
    assert [s.output.kind for s in (src, ext, cln, chk, flg)] == [
        "source_document.v1", "extracted_document.v2", "cleaned_document.v2", "chunk_set.v1", "chunk_set.v1"]
    assert "IPC_420_0" in {c.semantic_id for c in store.get(flg.output, ChunkSet).chunks}
    again = chunk_task.fn(root, cln.output, ChunkConfig())
    assert again.cached and again.output == chk.output
    smaller = chunk_task.fn(root, cln.output, ChunkConfig(chunk_tokens=40, overlap_tokens=0))
    assert not smaller.cached and smaller.output != chk.output


def test_source_task_reports_a_missing_file(store, tmp_path):
    with pytest.raises(IngestError) as info:
        source_task.fn(str(store.root), str(tmp_path / "nope.pdf"), None, "t", "p")
    assert info.value.reason == "missing"


def test_flag_task_marks_planted_instructions(store, tmp_path):
    f = tmp_path / "circular.txt"
    f.write_text(PLANTED, encoding="utf-8")
    root = str(store.root)
    src = source_task.fn(root, str(f), "Circular", "t", "p")
    chk = chunk_task.fn(root, clean_task.fn(root, extract_task.fn(root, src.output, ExtractConfig()).output,
                                            CleanConfig()).output, ChunkConfig())
    flagged = store.get(flag_task.fn(root, chk.output).output, ChunkSet)
    suspects = [c.semantic_id for c in flagged.chunks if "injection_suspected" in c.flags]
    assert suspects and all(s.startswith("Circular_8") for s in suspects)


def test_request_task_gives_each_question_its_own_artifact(store):
    a = request_task.fn(str(store.root), AnswerRequest(query="first question"))
    b = request_task.fn(str(store.root), AnswerRequest(query="second question"))
    assert a.output != b.output


def test_context_task_config_covers_the_policy(store):
    from contracts import QueryAnalysis, RetrievalResult

    result = RetrievalResult(query="q", tenant_id="t", project_id="p", top_k=5, results=(),
                             query_analysis=QueryAnalysis())
    ref = store.put(result, stage="retrieve", stage_version="x")
    a = context_task.fn(str(store.root), ref, RetrieveConfig(), GenerationPolicy())
    b = context_task.fn(str(store.root), ref, RetrieveConfig(), GenerationPolicy(quarantine_flagged=False))
    assert a.config_sha256 != b.config_sha256


def test_precheck_is_decided_once_per_pack_and_policy(store, monkeypatch):
    """A pass is remembered as the pack it lets through and a refusal as its Answer: a repeated question is
    decided from the cache (no model, no word list); another policy or ``force`` decides again."""
    from flows.tasks import precheck_task
    from stages.grounding import precheck
    from tests.packs import IPC_379, make_chunk, make_pack

    calls = []
    real = precheck.precheck_pack
    monkeypatch.setattr(precheck, "precheck_pack", lambda *a, **k: calls.append(1) or real(*a, **k))
    root = str(store.root)
    answerable = store.put(make_pack("What is the punishment for theft?", [make_chunk("IPC_379_0", IPC_379)]),
                           stage="context", stage_version="x")
    off_topic = store.put(make_pack("Who won the cricket world cup?", [make_chunk("IPC_379_0", IPC_379)]),
                          stage="context", stage_version="x")
    first, again = (precheck_task.fn(root, answerable, GenerationPolicy()) for _ in range(2))
    assert (first.output, again.output, first.cached, again.cached, len(calls)) == (None, None, False, True, 1)
    refused, refused_again = (precheck_task.fn(root, off_topic, GenerationPolicy()) for _ in range(2))
    assert refused.output is not None and refused_again.output == refused.output and refused_again.cached
    assert len(calls) == 2
    other = precheck_task.fn(root, answerable, GenerationPolicy(min_confidence=0.99))
    forced = precheck_task.fn(root, answerable, GenerationPolicy(), force=True)
    assert not other.cached and not forced.cached and forced.output is None and len(calls) == 4
    assert other.output is not None, "a stricter policy refuses the same pack"
