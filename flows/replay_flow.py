"""The ``replay`` flow: re-run any stage of a recorded run on its stored inputs, with optional changes.

Answer runs replay from ``retrieve``, ``context``, ``generate`` (precheck included) or ``validate``;
ingest runs from ``extract``, ``clean``, ``chunk``, ``flag`` or ``embed`` (per file; the index is not
touched). Stages are recomputed (never served from the cache), and new artifacts are written beside the
old: with nothing changed they land on the same addresses, i.e. byte-identical files.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefect import flow

from contracts import (
    Answer,
    ArtifactRef,
    ChunkConfig,
    CleanConfig,
    EmbedConfig,
    ExtractConfig,
    GenerationPolicy,
    RetrieveConfig,
    RunRecord,
    RunStep,
)
from contracts.errors import ConfigError
from flows import runs
from flows.answer_flow import ANSWER_STAGES, apply_overrides, run_answer_chain
from flows.backends import llm_spec_from_settings
from flows.settings import Settings
from flows.tasks import _store, chunk_task, clean_task, embed_task, extract_task, flag_task

__all__ = ["replay_flow", "INGEST_STAGES"]

INGEST_STAGES = ("extract", "clean", "chunk", "flag", "embed")


def _replay_answer(store_root: str, record: RunRecord, stage: str, llm: str | None, llm_model: str | None,
                   overrides: dict[str, str], recorder: runs.RunRecorder) -> list[ArtifactRef]:
    st = _store(store_root)
    params = dict(record.parameters)
    by_stage = {s.stage: s for s in record.steps}
    if "request" not in by_stage:
        raise ConfigError(f"run {record.run_id} has no stored request to replay from")
    retrieve_cfg = st.get(f"retrieve_config.v1:{params['retrieve_config']}", RetrieveConfig)
    policy = st.get(f"generation_policy.v1:{params['policy']}", GenerationPolicy)
    retrieve_cfg, policy = apply_overrides(retrieve_cfg, policy, overrides)
    spec = json.loads(params["llm"])
    if llm or llm_model:
        spec = llm_spec_from_settings(Settings(), llm or spec.get("backend"), llm_model)
    given = {s: by_stage[s].output for s in ("retrieve", "context", "generate") if s in by_stage and by_stage[s].output}
    missing = [s for s in ANSWER_STAGES[: ANSWER_STAGES.index(stage)] if s in ("retrieve", "context") and s not in given]
    if stage == "validate" and "generate" not in given:
        missing.append("generate")
    if missing:
        raise ConfigError(f"run {record.run_id} has no stored output of {', '.join(missing)}: replay from an earlier stage")
    index_ref = by_stage["retrieve"].inputs[1] if "retrieve" in by_stage else None
    recorder.parameters = tuple(sorted({**params, "llm": json.dumps(spec, sort_keys=True), "from": stage,
                                        "retrieve_config": st.put(retrieve_cfg, stage="config", stage_version="config.v1").sha256,
                                        "policy": st.put(policy, stage="config", stage_version="config.v1").sha256}.items()))
    recorder.steps.append(by_stage["request"])
    answer_ref = run_answer_chain(
        store_root, request_ref=by_stage["request"].output, index_ref=index_ref, retrieve_cfg=retrieve_cfg,
        policy=policy, llm=spec, embedder=params.get("embedder", "minilm"), steps=recorder.steps,
        start=stage, given=given, force=True)
    return [answer_ref]


def _replay_ingest(store_root: str, record: RunRecord, stage: str, overrides: dict[str, str],
                   recorder: runs.RunRecorder) -> list[ArtifactRef]:
    st = _store(store_root)
    params = dict(record.parameters)
    if overrides:
        raise ConfigError("--set is not supported for ingest replays yet")
    cfgs = {
        "extract": st.get(f"extract_config.v1:{params['extract_config']}", ExtractConfig),
        "clean": st.get(f"clean_config.v1:{params['clean_config']}", CleanConfig),
        "chunk": st.get(f"chunk_config.v1:{params['chunk_config']}", ChunkConfig),
        "embed": st.get(f"embed_config.v1:{params['embed_config']}", EmbedConfig),
    }
    embedder = params.get("embedder", "minilm")
    # Steps are recorded per file in order: split them at each "source" step.
    chains: list[list[RunStep]] = []
    for step in record.steps:
        if step.stage == "source":
            chains.append([])
        if chains:
            chains[-1].append(step)
    outputs: list[ArtifactRef] = []
    first = INGEST_STAGES.index(stage)
    for chain in chains:
        by_stage = {s.stage: s for s in chain}
        if stage not in by_stage:
            continue  # this file failed before reaching the stage
        ref = by_stage[stage].inputs[0]
        for name in INGEST_STAGES[first:]:
            if name == "extract":
                step = extract_task(store_root, ref, cfgs["extract"], force=True)
            elif name == "clean":
                step = clean_task(store_root, ref, cfgs["clean"], force=True)
            elif name == "chunk":
                step = chunk_task(store_root, ref, cfgs["chunk"], force=True)
            elif name == "flag":
                step = flag_task(store_root, ref, force=True)
            else:
                step = embed_task(store_root, ref, cfgs["embed"], embedder, None, force=True)
            recorder.steps.append(step)
            if name != "embed":
                ref = step.output
        outputs.append(recorder.steps[-1].output)
    return outputs


@flow(name="replay", persist_result=False, log_prints=False)
def replay_flow(
    run_id: str,
    from_stage: str = "retrieve",
    llm: str | None = None,
    llm_model: str | None = None,
    overrides: dict[str, str] | None = None,
    store: str | None = None,
) -> RunRecord:
    """Re-run ``from_stage`` and everything after it for a recorded run; returns the new run's record."""
    settings = Settings()
    store_root = str(Path(store or settings.home).resolve())
    st = _store(store_root)
    record = st.get_run(run_id)
    source_flow = record.flow if record.flow != "replay" else dict(record.parameters).get("source_flow", "answer")
    if source_flow == "answer" and from_stage not in ANSWER_STAGES:
        raise ConfigError(f"answer runs replay from one of {', '.join(ANSWER_STAGES)}, not {from_stage!r}")
    if source_flow == "ingest" and from_stage not in INGEST_STAGES:
        raise ConfigError(f"ingest runs replay from one of {', '.join(INGEST_STAGES)}, not {from_stage!r}")
    recorder = runs.RunRecorder(st, flow="replay", question=record.question, replay_of=record.run_id,
                                parameters={"source_flow": source_flow, "from": from_stage})
    try:
        if source_flow == "answer":
            outputs = _replay_answer(store_root, record, from_stage, llm, llm_model, overrides or {}, recorder)
        else:
            outputs = _replay_ingest(store_root, record, from_stage, overrides or {}, recorder)
        recorder.parameters = tuple(sorted({**dict(recorder.parameters), "source_flow": source_flow}.items()))
        recorder.finish(outputs=outputs)
    except Exception as exc:
        recorder.finish(outputs=[], status="failed", error=f"{type(exc).__name__}: {exc}")
        raise
    return st.get_run(recorder.run_id)


def replay_answer(store_root: str, record: RunRecord) -> Answer | None:
    """The Answer a replay run produced, if it replayed an answer run."""
    st = _store(store_root)
    for ref in record.outputs:
        if ref.kind == "answer.v1":
            return st.get(ref, Answer).model_copy(update={"run_id": record.run_id})
    return None
