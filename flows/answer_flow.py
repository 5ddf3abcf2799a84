"""The ``answer`` flow: AnswerRequest -> RetrievalResult -> ContextPack -> (precheck) -> DraftAnswer -> Answer.

Whatever fails inside (the embedder, a missing index file, the LLM server), the flow ends in a refusal
Answer with status ``error`` and a reason code: never a traceback for the user, never a half-written
artifact (the store writes atomically, and a failed stage writes nothing).
"""

from __future__ import annotations

import json
from pathlib import Path


from contracts import (
    Answer,
    AnswerRequest,
    ArtifactRef,
    ArtifactStore,
    GenerationPolicy,
    ProjectSettings,
    RetrieveConfig,
    RunStep,
    sha256_text,
)
from contracts.errors import (
    ArtifactCorruptError,
    ArtifactNotFoundError,
    ConfigError,
    IndexMismatchError,
    LLMTransportError,
    StorageError,
    VerifierLoadError,
)
from flows import runs
from flows.backends import LLMSpec, llm_spec_from_settings
from flows.index_views import view_ref
from flows.lazy_prefect import flow
from flows.settings import Settings
from flows import tasks as _tasks
from flows.tasks import _store

__all__ = [
    "answer_flow",
    "answer_question",
    "ANSWER_STAGES",
    "run_answer_chain",
    "degraded_answer",
    "build_policy",
    "apply_overrides",
    "validate_overrides",
    "project_settings_pointer",
    "load_project_settings",
    "save_project_settings",
]

ANSWER_STAGES = ("retrieve", "context", "successors", "answerability", "precheck", "generate", "validate")

_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (LLMTransportError, "llm_transport_error"),
    (VerifierLoadError, "verifier_unavailable"),
    (IndexMismatchError, "index_mismatch"),
    (ArtifactNotFoundError, "artifact_missing"),
    (ArtifactCorruptError, "artifact_corrupt"),
    (ConfigError, "config_error"),
)


def degraded_answer(query: str, exc: BaseException, policy: GenerationPolicy) -> Answer:
    """The deterministic refusal for any failure. Built from contracts only, so it cannot fail itself."""
    if isinstance(exc, StorageError):
        # A store the file system refuses: full or otherwise (the API answers these 507 and 503, as it does an
        # upload or a retrieval: api/app.py). Its message names the action and the cause, never the path.
        code, detail = ("storage_full" if exc.no_space else "storage_unavailable"), str(exc)
    else:
        code = next((c for t, c in _REASONS if isinstance(exc, t)), "internal_error")
        detail = f"{type(exc).__name__}: {exc}"
    return Answer(
        query=query, status="error", answer=policy.refusal_text,
        refusal_reason=f"the answer pipeline failed ({code}): {detail[:400]}", reason_code=code,
    )


def build_policy(settings: Settings, **overrides: object) -> GenerationPolicy:
    fields: dict[str, object] = {}
    if settings.refusal_text:
        fields["refusal_text"] = settings.refusal_text
    if settings.min_confidence is not None:
        fields["min_confidence"] = settings.min_confidence
    fields.update({k: v for k, v in overrides.items() if v is not None})
    return GenerationPolicy(**fields)


def apply_overrides(
    retrieve_cfg: RetrieveConfig, policy: GenerationPolicy, overrides: dict[str, str]
) -> tuple[RetrieveConfig, GenerationPolicy]:
    """``--set key=value`` for ask and replay: a RetrieveConfig or GenerationPolicy field, validated by its model."""
    r_upd: dict[str, object] = {}
    p_upd: dict[str, object] = {}
    for key, raw in overrides.items():
        target = r_upd if key in RetrieveConfig.model_fields else p_upd if key in GenerationPolicy.model_fields else None
        if target is None or key == "kind":
            raise ConfigError(f"--set {key}: not a retrieval or generation-policy setting")
        try:
            value: object = json.loads(raw)
        except ValueError:
            value = raw
        target[key] = value
    try:
        return (RetrieveConfig.model_validate({**retrieve_cfg.model_dump(), **r_upd}),
                GenerationPolicy.model_validate({**policy.model_dump(), **p_upd}))
    except ValueError as exc:
        raise ConfigError(f"--set: {exc}") from exc


def validate_overrides(overrides: dict[str, str]) -> None:
    """Raise ConfigError unless every pair names a RetrieveConfig/GenerationPolicy field with a valid value."""
    apply_overrides(RetrieveConfig(), GenerationPolicy(), overrides)


def project_settings_pointer(tenant: str, project: str) -> str:
    """The store pointer naming a project's standing settings (hashed: tenant and project names are free text)."""
    return "settings/" + sha256_text(f"{tenant}\x00{project}")[:32]


def load_project_settings(st: ArtifactStore, tenant: str, project: str) -> ProjectSettings | None:
    ref = st.get_pointer(project_settings_pointer(tenant, project))
    return st.get(ref, ProjectSettings) if ref is not None else None


def save_project_settings(st: ArtifactStore, settings: ProjectSettings) -> ProjectSettings:
    """Validate the overrides against the models, then store them and point the project at them."""
    validate_overrides(dict(settings.overrides))
    ref = st.put(settings, stage="settings", stage_version="settings.v1")
    st.set_pointer(project_settings_pointer(settings.tenant_id, settings.project_id), ref)
    return settings


def _successors_task(orchestrated: bool):  # noqa: ANN202 - the task, or its plain function
    from flows.succession import successors_task

    return successors_task if orchestrated else successors_task.fn


def run_answer_chain(
    store_root: str,
    *,
    request_ref: ArtifactRef,
    index_ref: ArtifactRef | None,
    retrieve_cfg: RetrieveConfig,
    policy: GenerationPolicy,
    llm: LLMSpec,
    embedder: str,
    steps: list[RunStep],
    verifier: str = "citebound",
    start: str = "retrieve",
    given: dict[str, ArtifactRef] | None = None,
    force: bool = False,
    orchestrated: bool = True,
) -> ArtifactRef:
    """Run the answer stages from ``start`` on; earlier stages' outputs come from ``given``.

    ``orchestrated=False`` calls each task's function directly (``task.fn``): the same stages, cache keys and
    artifacts, without Prefect task runs (the HTTP API's path, see ``answer_question``)."""
    given = given or {}
    first = ANSWER_STAGES.index(start)
    chain = (_tasks.retrieve_task, _tasks.context_task, _tasks.answerability_task, _tasks.precheck_task,
             _tasks.generate_task, _tasks.validate_task)
    retrieve_task, context_task, answerability_task, precheck_task, generate_task, validate_task = (  # noqa: N806
        chain if orchestrated else tuple(t.fn for t in chain))

    def runs_(stage: str) -> bool:
        return ANSWER_STAGES.index(stage) >= first

    if runs_("retrieve"):
        if index_ref is None:
            raise ArtifactNotFoundError("no index in this store yet: ingest documents first")
        steps.append(retrieve_task(store_root, request_ref, index_ref, retrieve_cfg, embedder, force=force))
        retrieval_ref = steps[-1].output
    else:
        retrieval_ref = given.get("retrieve")
    if runs_("context"):
        steps.append(context_task(store_root, retrieval_ref, retrieve_cfg, policy, force=force))
        pack_ref = steps[-1].output
    else:
        pack_ref = given["context"]
    if runs_("successors"):
        # The successor maps' provisions (flows/succession.py): the pack goes on unchanged when none applies.
        step = _successors_task(orchestrated)(store_root, pack_ref, request_ref, index_ref, policy, embedder, force=force)
        if step is not None:
            steps.append(step)
            pack_ref = step.output
    else:
        pack_ref = given.get("successors") or pack_ref
    if runs_("answerability") or given.get("answerability") is None:
        # A run recorded before the verifier has no reading: replays take one now.
        steps.append(answerability_task(store_root, pack_ref, policy, verifier, force=force))
        answerability_ref = steps[-1].output
    else:
        answerability_ref = given["answerability"]
    if runs_("generate"):
        steps.append(precheck_task(store_root, pack_ref, policy, force=force, embedder_name=embedder,
                                   answerability_ref=answerability_ref))
        if steps[-1].output is not None:
            return steps[-1].output
        steps.append(generate_task(store_root, pack_ref, llm, policy, force=force, answerability_ref=answerability_ref))
        draft_ref = steps[-1].output
    else:
        draft_ref = given["generate"]
    steps.append(validate_task(store_root, pack_ref, draft_ref, policy, force=force,
                               answerability_ref=answerability_ref, verifier=verifier))
    return steps[-1].output


@flow(name="answer", persist_result=False, log_prints=False)
def answer_flow(
    question: str,
    tenant: str = "default",
    project: str = "default",
    top_k: int | None = None,
    llm: str | None = None,
    llm_model: str | None = None,
    store: str | None = None,
    embedder: str = "minilm",
    llm_base_url: str | None = None,
    refusal_text: str | None = None,
    min_confidence: float | None = None,
    overrides: dict[str, str] | None = None,
    verifier: str | None = None,
) -> Answer:
    """Answer one question from the indexed documents of (tenant, project), or refuse with a reason.

    ``overrides`` are ``--set key=value`` pairs for any RetrieveConfig or GenerationPolicy field
    (``dense_weight=1``, ``min_confidence=0.7``), validated by those models. ``llm_base_url`` is the
    OpenAI-compatible server of this call (the HTTP API's per-request LLM settings).
    """
    return answer_question(
        question, tenant=tenant, project=project, top_k=top_k, llm=llm, llm_model=llm_model, store=store,
        embedder=embedder, llm_base_url=llm_base_url, refusal_text=refusal_text, min_confidence=min_confidence,
        overrides=overrides, verifier=verifier, orchestrated=True)


def answer_question(
    question: str,
    *,
    tenant: str = "default",
    project: str = "default",
    top_k: int | None = None,
    llm: str | None = None,
    llm_model: str | None = None,
    store: str | None = None,
    embedder: str = "minilm",
    llm_base_url: str | None = None,
    refusal_text: str | None = None,
    min_confidence: float | None = None,
    overrides: dict[str, str] | None = None,
    verifier: str | None = None,
    orchestrated: bool = False,
) -> Answer:
    """The body of ``answer_flow``. Called directly (``orchestrated=False``) it runs the same stages, writes
    the same artifacts and run record (replayable), without a Prefect flow or task runs: the HTTP API answers
    this way, since a flow run costs Prefect server round trips that 8 concurrent clients queue behind."""
    settings = Settings()
    store_root = str(Path(store or settings.home).resolve())
    st: ArtifactStore = _store(store_root)
    policy = GenerationPolicy()
    run = None
    try:
        policy = build_policy(settings, refusal_text=refusal_text, min_confidence=min_confidence)
        spec = llm_spec_from_settings(settings, llm, llm_model, llm_base_url)
        verifier_name = verifier or settings.verifier
        # Precedence, lowest first: process settings, the project's standing settings, this call's top_k,
        # this call's own --set pairs.
        retrieve_cfg = RetrieveConfig(top_k=settings.top_k)
        standing = load_project_settings(st, tenant, project)
        if standing and standing.overrides:
            retrieve_cfg, policy = apply_overrides(retrieve_cfg, policy, dict(standing.overrides))
        if top_k:
            retrieve_cfg = RetrieveConfig.model_validate({**retrieve_cfg.model_dump(), "top_k": top_k})
        if overrides:
            retrieve_cfg, policy = apply_overrides(retrieve_cfg, policy, overrides)
        cfg_ref = st.put(retrieve_cfg, stage="config", stage_version="config.v1")
        policy_ref = st.put(policy, stage="config", stage_version="config.v1")
        index_ref = view_ref(st, tenant, project, embedder)  # this scope's own view (flows/index_views.py)
        run = runs.RunRecorder(st, flow="answer", question=question, parameters={
            "tenant": tenant, "project": project, "llm": json.dumps(spec, sort_keys=True), "embedder": embedder,
            "verifier": verifier_name,
            "retrieve_config": cfg_ref.sha256, "policy": policy_ref.sha256,
            "index": index_ref.sha256 if index_ref else ""})
        request = AnswerRequest(query=question, tenant_id=tenant, project_id=project, top_k=retrieve_cfg.top_k)
        request_task = _tasks.request_task if orchestrated else _tasks.request_task.fn
        run.steps.append(request_task(store_root, request))
        answer_ref = run_answer_chain(
            store_root, request_ref=run.steps[-1].output, index_ref=index_ref, retrieve_cfg=retrieve_cfg,
            policy=policy, llm=spec, embedder=embedder, steps=run.steps, orchestrated=orchestrated,
            verifier=verifier_name)
        answer = st.get(answer_ref, Answer)
        run.finish(outputs=[answer_ref])
    except Exception as exc:  # noqa: BLE001 - the contract: any failure degrades to a refusal with a reason
        answer = degraded_answer(question, exc, policy)
        outputs = []
        try:
            outputs = [st.put(answer, stage="degrade", stage_version="degrade.v1")]
        except Exception:  # noqa: BLE001 - a broken store must not turn a refusal into a crash
            pass
        if run is not None:
            try:
                run.finish(outputs=outputs, status="failed", error=answer.refusal_reason)
            except Exception:  # noqa: BLE001
                pass
    return answer.model_copy(update={"run_id": run.run_id if run else None})
