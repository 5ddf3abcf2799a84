"""The ``replay`` flow: re-run any stage of a recorded run on its stored inputs, with optional changes.

Answer runs replay from ``retrieve``, ``context``, ``successors``, ``answerability``, ``generate`` (precheck
included) or ``validate`` (a run recorded before the verifier gets its reading taken when replayed);
ingest runs from ``extract``, ``clean``, ``chunk``, ``flag`` or ``embed`` (per file; the index is not
touched). Stages are recomputed (never served from the cache), and new artifacts are written beside the
old: with nothing changed they land on the same addresses, i.e. byte-identical files; with changed code
(a new derived stage version) they hold what the current code computes.

A run that holds no stored output for what the requested stage needs (a replay of a replay, a run refused
before generation, a failed run) is refused before anything runs: ``check_replayable`` raises a one-line
ConfigError naming the run, the stages it does have and where it can be replayed from.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefect import flow

from contracts import (
    Answer,
    ArtifactRef,
    ArtifactStore,
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
from contracts.store import RETIRED_KINDS, kind_of
from flows import runs
from flows.answer_flow import ANSWER_STAGES, apply_overrides, run_answer_chain
from flows.backends import llm_spec_from_settings
from flows.settings import Settings
from flows.tasks import _store, chunk_task, clean_task, embed_task, extract_task, flag_task

__all__ = ["replay_flow", "replay_answer", "check_replayable", "replayable_from", "INGEST_STAGES"]

INGEST_STAGES = ("extract", "clean", "chunk", "flag", "embed")
_INGEST_CONFIGS = ("extract_config", "clean_config", "chunk_config", "embed_config")
# What an answer replay from each stage reads from the recorded run: stored outputs of these stages.
_ANSWER_NEEDS = {
    "retrieve": ("request",),
    "context": ("request", "retrieve"),
    "successors": ("request", "context"),
    "answerability": ("request", "context"),
    "precheck": ("request", "context"),
    "generate": ("request", "context"),
    "validate": ("request", "context", "generate"),
}


def _source_flow(record: RunRecord) -> str:
    return record.flow if record.flow != "replay" else dict(record.parameters).get("source_flow", "answer")


def _stored_stages(record: RunRecord) -> list[str]:
    return list(dict.fromkeys(s.stage for s in record.steps if s.output is not None))


def _missing(record: RunRecord, stage: str) -> list[str]:
    """What the run lacks to be replayed from ``stage``, in words (empty: replayable)."""
    params = dict(record.parameters)
    have = set(_stored_stages(record))
    if _source_flow(record) == "answer":
        missing = [f"{s} output" for s in _ANSWER_NEEDS[stage] if s not in have]
        if stage == "retrieve" and not params.get("index") and "retrieve" not in have:
            missing.append("index")
        needed = ("retrieve_config", "policy", "llm")
    else:
        missing = [] if stage in have else [f"{stage} step"]  # its input is the one that step recorded
        needed = _INGEST_CONFIGS
    return missing + [f"{p} parameter" for p in needed if p not in params]


def replayable_from(record: RunRecord) -> list[str]:
    """The stages this run can be replayed from, in pipeline order."""
    stages = ANSWER_STAGES if _source_flow(record) == "answer" else INGEST_STAGES
    return [s for s in stages if not _missing(record, s)]


def check_replayable(record: RunRecord, from_stage: str) -> None:
    """Raise a one-line ConfigError unless ``record`` holds what a replay from ``from_stage`` reads."""
    flow = _source_flow(record)
    stages = ANSWER_STAGES if flow == "answer" else INGEST_STAGES
    if from_stage not in stages:
        raise ConfigError(f"{flow} runs replay from one of {', '.join(stages)}, not {from_stage!r}")
    missing = _missing(record, from_stage)
    if not missing:
        return
    what = f"run {record.run_id}" + (f" (a replay of {record.replay_of})" if record.replay_of else "")
    if record.status != "completed":
        what += f" ({record.status})"
    have = ", ".join(_stored_stages(record)) or "none"
    options = replayable_from(record)
    hint = f"replay it from {' or '.join(options)}" if options else "it cannot be replayed from any stage"
    if record.replay_of:
        hint += f", or replay {record.replay_of} itself"
    raise ConfigError(f"{what} has no stored {', '.join(missing)} to replay {from_stage} from; "
                      f"it has stored outputs of: {have}; {hint}")


def _replay_answer(store_root: str, record: RunRecord, stage: str, llm: str | None, llm_model: str | None,
                   overrides: dict[str, str], recorder: runs.RunRecorder) -> list[ArtifactRef]:
    st = _store(store_root)
    params = dict(record.parameters)
    by_stage = {s.stage: s for s in record.steps}
    # Configs by their sha alone: a config stored under a since-retired kind is read through its migration.
    retrieve_cfg = st.get(params["retrieve_config"], RetrieveConfig)
    policy = st.get(params["policy"], GenerationPolicy)
    retrieve_cfg, policy = apply_overrides(retrieve_cfg, policy, overrides)
    spec = json.loads(params["llm"])
    if llm or llm_model:
        spec = llm_spec_from_settings(Settings(), llm or spec.get("backend"), llm_model)
    given = {s: by_stage[s].output for s in ("retrieve", "context", "successors", "answerability", "generate")
             if s in by_stage and by_stage[s].output}
    if "retrieve" in by_stage:
        index_ref = by_stage["retrieve"].inputs[1]
    else:  # a run that failed in retrieve: the index it was given
        index_ref = st.ref_of(params["index"]) if stage == "retrieve" else None
    recorder.parameters = tuple(sorted({**params, "llm": json.dumps(spec, sort_keys=True), "from": stage,
                                        "retrieve_config": st.put(retrieve_cfg, stage="config", stage_version="config.v1").sha256,
                                        "policy": st.put(policy, stage="config", stage_version="config.v1").sha256}.items()))
    recorder.steps.append(by_stage["request"])
    answer_ref = run_answer_chain(
        store_root, request_ref=by_stage["request"].output, index_ref=index_ref, retrieve_cfg=retrieve_cfg,
        policy=policy, llm=spec, embedder=params.get("embedder", "minilm"), steps=recorder.steps,
        start=stage, given=given, force=True, verifier=params.get("verifier", "citebound"))
    return [answer_ref]


def _replay_ingest(store_root: str, record: RunRecord, stage: str, overrides: dict[str, str],
                   recorder: runs.RunRecorder) -> list[ArtifactRef]:
    st = _store(store_root)
    params = dict(record.parameters)
    if overrides:
        raise ConfigError("--set is not supported for ingest replays yet")
    cfgs = {
        "extract": st.get(params["extract_config"], ExtractConfig),
        "clean": st.get(params["clean_config"], CleanConfig),
        "chunk": st.get(params["chunk_config"], ChunkConfig),
        "embed": st.get(params["embed_config"], EmbedConfig),
    }
    embedder = params.get("embedder", "minilm")
    # The configs go into the replay's record too, so a replay of this replay finds them.
    recorder.parameters = tuple(sorted({**dict(recorder.parameters), "from": stage, "embedder": embedder,
                                        **{k: params[k] for k in _INGEST_CONFIGS}}.items()))
    # Steps are recorded per file in pipeline order ("source" first; a replay's from its first stage on):
    # a file's chain ends where the next step is not a later stage.
    order = ("source", *INGEST_STAGES)
    chains: list[list[RunStep]] = []
    for step in record.steps:
        if step.stage not in order:
            continue
        if not chains or order.index(step.stage) <= order.index(chains[-1][-1].stage):
            chains.append([])
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
    check_replayable(record, from_stage)
    source_flow = _source_flow(record)
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
    st: ArtifactStore = _store(store_root)
    for ref in record.outputs:
        if ref.kind == kind_of(Answer) or RETIRED_KINDS.get(ref.kind) is Answer:
            return st.get(ref, Answer).model_copy(update={"run_id": record.run_id})
    return None
