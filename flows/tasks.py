"""Thin Prefect tasks: read input artifacts from the store, call one pure stage, write its output.

Each task is keyed like a build system: (input artifact hashes, stage config hash, the stage's version
derived from its code, its project imports, its adapters and its libraries: ``flows/stage_versions.py``).
When that key already names a stored, verifiable output, the task returns it without recomputing
(``RunStep.cached``); any change to code a stage reaches gives it a new key, so it recomputes. Prefect's own result caching is off: the artifact store is the cache, so the same
keys work in a thread, a Dask worker or a deployment's worker process.

Retries: only for reading input files (I/O) and LLM transport errors — never on generated content.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from contracts import (
    Answer,
    AnswerRequest,
    ArtifactRef,
    ArtifactStore,
    ChunkConfig,
    ChunkSet,
    CleanConfig,
    CleanedDocument,
    ContextPack,
    Contract,
    DraftAnswer,
    EmbedConfig,
    EmbeddingSet,
    ExtractConfig,
    ExtractedDocument,
    GenerationPolicy,
    RetrievalResult,
    RetrieveConfig,
    RunStep,
    SourceDocument,
    cache_key,
    config_sha256,
    content_sha256,
)
from contracts.errors import IngestError, LLMTransportError, StageInvariantError
from contracts.verifier import AnswerabilityReport
from flows.backends import READER_DIR, LLMSpec, get_embedder, get_llm, get_ocr, get_reranker, get_verifier
from flows.index_backends import index_identity, load_search_index
from flows.lazy_prefect import NO_CACHE, task
from flows.stage_versions import StageVersion, stage_version as derived_version
from flows.store_layout import vectors_from_bytes, vectors_to_bytes

__all__ = [
    "run_stage",
    "source_task",
    "extract_task",
    "clean_task",
    "chunk_task",
    "flag_task",
    "embed_task",
    "request_task",
    "retrieve_task",
    "context_task",
    "precheck_task",
    "generate_task",
    "validate_task",
    "vectors_to_bytes",
    "vectors_from_bytes",
    "load_search_index",
]


@lru_cache(maxsize=8)
def _store(root: str) -> ArtifactStore:
    return ArtifactStore(root)


def run_stage(
    store: ArtifactStore,
    *,
    stage: str,
    config: Contract | dict,
    inputs: tuple[ArtifactRef, ...],
    compute: Callable[[], Contract],
    force: bool = False,
    backends: tuple[object, ...] = (),
    stage_version: str | None = None,
    version: StageVersion | None = None,
) -> RunStep:
    """Return the cached output for (inputs, config, stage version), or compute, store and remember it.

    The version is derived from the code of ``stage`` and of the ``backends`` (adapters) it runs with
    (``flows.stage_versions``); ``version`` gives one explicitly (tests). ``stage_version``, if a caller
    still passes its module's ``STAGE_VERSION``, must equal the derived label. ``force`` recomputes even on
    a hit (replay uses it to prove determinism: an unchanged stage writes the same address, so the stored
    bytes stay identical).
    """
    version = version or derived_version(stage, backends=backends)
    if stage_version is not None and stage_version != version.label:
        raise ValueError(f"stage {stage!r}: label {stage_version!r} given, its module says {version.label!r}")
    cfg_sha = content_sha256(config)
    key = cache_key(stage, version.label, cfg_sha, inputs, version.code)
    started = time.perf_counter()

    def step(output: ArtifactRef, cached: bool) -> RunStep:
        return RunStep(
            stage=stage, stage_version=version.label, code_version=version.code, config_sha256=cfg_sha,
            inputs=inputs, output=output, cached=cached, seconds=round(time.perf_counter() - started, 4),
        )

    if not force:
        hit = store.cached(key)
        if hit is not None:
            return step(hit, cached=True)
    output = compute()
    if not inputs and not force:
        # Without inputs the key would name every output of this stage: only content-identified writes may skip.
        raise ValueError(f"stage {stage!r} has no input artifacts: call run_stage with force=True")
    ref = store.put(output, stage=stage, stage_version=version.label, config_sha256=cfg_sha, inputs=inputs,
                    code_version=version.code)
    if inputs:
        # A stage without inputs (source, request) is always recomputed: its one key would name every output, so
        # remembering it would only repoint one entry at the latest, maybe since discarded, output.
        store.remember(key, ref)
    return step(ref, cached=False)


def _retry_on_io(task, task_run, state) -> bool:  # noqa: ANN001 - Prefect's hook signature
    """Retry reading a file only on transient OS errors, never on bad content."""
    try:
        state.result()
    except (IngestError, FileNotFoundError, IsADirectoryError, PermissionError):
        return False
    except OSError:
        return True
    except Exception:  # noqa: BLE001 - anything else is not an I/O hiccup
        return False
    return False


def _retry_on_transport(task, task_run, state) -> bool:  # noqa: ANN001
    """Retry an LLM call only when the transport failed; a bad answer is never retried."""
    try:
        state.result()
    except LLMTransportError:
        return True
    except Exception:  # noqa: BLE001
        return False
    return False


# --------------------------------------------------------------------------------- ingestion


@task(name="source", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[0.2, 1.0], retry_condition_fn=_retry_on_io)
def source_task(
    store_root: str, path: str, doc_code: str | None, tenant_id: str, project_id: str, stored_sha: str | None = None,
) -> RunStep:
    """Read one input file into the store (bytes as a blob, identity as a SourceDocument). With ``stored_sha``
    the bytes are the store's own (verified) blob and ``path`` only names the document (repair)."""
    from stages.ingest.extract import make_source_document

    store = _store(store_root)
    p = Path(path)
    if stored_sha is not None:
        data = store.get_blob(stored_sha)
    elif not p.exists():
        raise IngestError("missing", "no such file", filename=path)
    elif not p.is_file():
        raise IngestError("unsupported_type", "not a regular file", filename=path)
    else:
        data = p.read_bytes()
    source = make_source_document(str(p.resolve()), data, doc_code=doc_code, tenant_id=tenant_id, project_id=project_id)
    store.put_blob(data, suffix=p.suffix.lower() or ".bin")
    # A source has no input artifact: its identity is its content, so it is always (idempotently) written.
    return run_stage(store, stage="source", config={}, inputs=(), compute=lambda: source, force=True)


@task(name="extract", cache_policy=NO_CACHE)
def extract_task(store_root: str, source_ref: ArtifactRef, cfg: ExtractConfig, force: bool = False) -> RunStep:
    from stages.ingest import extract

    store = _store(store_root)
    ocr = get_ocr() if cfg.ocr_enabled else None

    def compute() -> ExtractedDocument:
        source = store.get(source_ref, SourceDocument)
        data = store.get_blob(source.sha256)
        return extract.extract_document(source, data, cfg, ocr)

    # The OCR engine's code and the tesseract program's version are part of the stage's version.
    return run_stage(store, stage="extract", config=cfg, inputs=(source_ref,), compute=compute, force=force,
                     backends=(ocr,))


@task(name="clean", cache_policy=NO_CACHE)
def clean_task(store_root: str, extracted_ref: ArtifactRef, cfg: CleanConfig, force: bool = False) -> RunStep:
    from stages.ingest import clean

    store = _store(store_root)
    return run_stage(
        store, stage="clean", config=cfg, inputs=(extracted_ref,),
        compute=lambda: clean.clean_document(store.get(extracted_ref, ExtractedDocument), cfg), force=force,
    )


@task(name="chunk", cache_policy=NO_CACHE)
def chunk_task(store_root: str, cleaned_ref: ArtifactRef, cfg: ChunkConfig, force: bool = False) -> RunStep:
    from stages.ingest import chunk

    store = _store(store_root)
    return run_stage(
        store, stage="chunk", config=cfg, inputs=(cleaned_ref,),
        compute=lambda: chunk.chunk_document(store.get(cleaned_ref, CleanedDocument), cfg), force=force,
    )


@task(name="flag-injections", cache_policy=NO_CACHE)
def flag_task(store_root: str, chunk_set_ref: ArtifactRef, force: bool = False) -> RunStep:
    from stages.ingest import injection

    store = _store(store_root)
    return run_stage(
        store, stage="flag", config={}, inputs=(chunk_set_ref,),
        compute=lambda: injection.flag_injections(store.get(chunk_set_ref, ChunkSet)), force=force,
    )


@task(name="embed", cache_policy=NO_CACHE)
def embed_task(
    store_root: str,
    chunk_set_ref: ArtifactRef,
    cfg: EmbedConfig,
    embedder_name: str = "minilm",
    previous_embedding_sha: str | None = None,
    force: bool = False,
) -> RunStep:
    """Embed a chunk set; vectors of unchanged texts are reused from the document's previous version."""
    from stages.ingest import embed

    store = _store(store_root)
    embedder = get_embedder(embedder_name)
    config = {"embed": config_sha256(cfg), "model": embedder.model_name, "revision": embedder.model_revision}

    def compute() -> EmbeddingSet:
        chunk_set = store.get(chunk_set_ref, ChunkSet)
        cache: dict[str, np.ndarray] = {}
        if previous_embedding_sha:
            try:
                prev = store.get(f"embedding_set.v1:{previous_embedding_sha}", EmbeddingSet)
                if (prev.embedding_model, prev.model_revision, prev.embed_config_sha256) == (
                    embedder.model_name, embedder.model_revision, config_sha256(cfg)
                ):
                    prev_vecs = vectors_from_bytes(store.get_blob(prev.vectors_blob))
                    cache = dict(zip(prev.content_sha256s, prev_vecs, strict=True))
            except Exception:  # noqa: BLE001 - a broken cache only costs time, never correctness
                cache = {}
        vectors = embed.embed_chunks(chunk_set, embedder, cfg, cache=cache or None)
        blob = store.put_blob(vectors_to_bytes(vectors), suffix=".f32.npy")
        return EmbeddingSet(
            chunk_set_sha256=chunk_set_ref.sha256,
            embedding_model=embedder.model_name,
            model_revision=embedder.model_revision,
            dim=int(vectors.shape[1]) if vectors.ndim == 2 and vectors.shape[0] else embedder.dim,
            normalized=True,
            content_sha256s=tuple(c.content_sha256 for c in chunk_set.chunks),
            vectors_blob=blob,
            embed_config_sha256=config_sha256(cfg),
        )

    return run_stage(store, stage="embed", config=config,
                     inputs=(chunk_set_ref,), compute=compute, force=force, backends=(embedder,))


# --------------------------------------------------------------------------------- answering


@task(name="request", cache_policy=NO_CACHE)
def request_task(store_root: str, request: AnswerRequest) -> RunStep:
    store = _store(store_root)
    return run_stage(store, stage="request", config={}, inputs=(), compute=lambda: request, force=True)


@task(name="retrieve", cache_policy=NO_CACHE)
def retrieve_task(
    store_root: str,
    request_ref: ArtifactRef,
    index_ref: ArtifactRef,
    cfg: RetrieveConfig,
    embedder_name: str = "minilm",
    force: bool = False,
) -> RunStep:
    store = _store(store_root)
    # The index backend (its adapter's code and library versions) is part of the stage's version; read from the
    # manifest, so that a cache hit loads no index (nor builds a view).
    identity = index_identity(store, index_ref)
    # The reader's reranker, when the config asks for it and the model is shipped (its card and graph hash go
    # into the stage's version, so another model is another cache key).
    reranker = get_reranker() if cfg.reader_rerank and (READER_DIR / "reranker" / "card.json").is_file() else None

    def compute() -> RetrievalResult:
        from stages.retrieval import retrieve  # here, not above: a cache hit imports no stage (nor FAISS)

        request = store.get(request_ref, AnswerRequest)
        view = None
        if index_ref.kind == "index_view.v1":  # the (tenant, project)'s own view (flows/index_views.py)
            from flows.index_views import load_view

            view = load_view(store_root, index_ref, embedder_name)
            index = view.index
        else:  # the whole store's index, as runs recorded before views
            index = load_search_index(store_root, index_ref, embedder_name)
        if (type(index).__module__, type(index).__qualname__) != identity.adapter_class:
            raise StageInvariantError(f"the index loaded as {type(index).__qualname__}, its manifest says "
                                      f"{identity.adapter_class[1]}")
        result = retrieve.retrieve(
            request.query, index, get_embedder(embedder_name), cfg,
            tenant_id=request.tenant_id, project_id=request.project_id, reranker=reranker,
        )
        if view is not None:
            from flows.index_views import refuse_if_needed

            refuse_if_needed(view, result, cfg, get_embedder(embedder_name))
        return result.model_copy(update={"index_sha256": index_ref.sha256})

    return run_stage(store, stage="retrieve", config=cfg, inputs=(request_ref, index_ref), compute=compute,
                     force=force, backends=(get_embedder(embedder_name), identity, reranker))


@task(name="context", cache_policy=NO_CACHE)
def context_task(
    store_root: str, retrieval_ref: ArtifactRef, cfg: RetrieveConfig, policy: GenerationPolicy, force: bool = False
) -> RunStep:
    store = _store(store_root)

    def compute() -> ContextPack:
        from stages.retrieval import context

        return context.build_context_pack(store.get(retrieval_ref, RetrievalResult), cfg, policy)

    return run_stage(
        store, stage="context",
        config={"retrieve": config_sha256(cfg), "policy": config_sha256(policy)}, inputs=(retrieval_ref,),
        compute=compute, force=force,
    )


def _verifier_for(policy: GenerationPolicy, name: str):  # noqa: ANN202
    """The verifier a policy reads with (None when it switches the verifier off)."""
    return get_verifier(name) if policy.verify else None


@task(name="answerability", cache_policy=NO_CACHE)
def answerability_task(
    store_root: str, pack_ref: ArtifactRef, policy: GenerationPolicy, verifier: str = "citebound",
    force: bool = False,
) -> RunStep:
    """The verifier's reading of the pack (P(answers) per citable passage); an empty report when the policy
    switches the verifier off. A verifier that cannot load raises (the flow refuses with its reason code)."""
    store = _store(store_root)
    backend = _verifier_for(policy, verifier)

    def compute() -> AnswerabilityReport:
        from stages.grounding import answerability

        return answerability.score_answerability(store.get(pack_ref, ContextPack), policy, backend)

    return run_stage(store, stage="answerability", config=policy, inputs=(pack_ref,), backends=(backend,),
                     compute=compute, force=force)


@task(name="precheck", cache_policy=NO_CACHE)
def precheck_task(
    store_root: str, pack_ref: ArtifactRef, policy: GenerationPolicy, force: bool = False,
    embedder_name: str | None = None, answerability_ref: ArtifactRef | None = None,
) -> RunStep:
    """Refuse before generation (empty pack, low confidence, no passage the verifier reads as answering,
    insufficient evidence, a question detail no chunk carries); output None = go ahead. The embedder (the one
    retrieval used) maps paraphrased question words; without one the alignment check is word for word.

    Keyed like every stage (pack, policy, derived version with the embedder). A refusal is stored as usual; a
    pass is remembered as the pack itself ("go ahead with this pack"), so a repeated question is decided from
    the cache and loads no model here either."""
    store = _store(store_root)
    started = time.perf_counter()
    embedder = get_embedder(embedder_name) if embedder_name else None
    inputs = (pack_ref,) if answerability_ref is None else (pack_ref, answerability_ref)
    version = derived_version("precheck", backends=(embedder,))
    policy_sha = config_sha256(policy)
    key = cache_key("precheck", version.label, policy_sha, inputs, version.code)
    decided = None if force else store.cached(key)
    cached = decided is not None
    if decided is None:
        from stages.grounding import precheck

        report = store.get(answerability_ref, AnswerabilityReport) if answerability_ref is not None else None
        refusal = precheck.precheck_pack(store.get(pack_ref, ContextPack), policy, embedder, report)
        decided = pack_ref if refusal is None else store.put(
            refusal, stage="precheck", stage_version=version.label, config_sha256=policy_sha, inputs=inputs,
            code_version=version.code)
        store.remember(key, decided)
    return RunStep(stage="precheck", stage_version=version.label, code_version=version.code, config_sha256=policy_sha,
                   inputs=inputs, output=None if decided == pack_ref else decided, cached=cached,
                   seconds=round(time.perf_counter() - started, 4))


@task(
    name="generate", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=[0.5],
    retry_condition_fn=_retry_on_transport,
)
def generate_task(
    store_root: str, pack_ref: ArtifactRef, llm: LLMSpec, policy: GenerationPolicy, force: bool = False,
    answerability_ref: ArtifactRef | None = None,
) -> RunStep:
    store = _store(store_root)
    backend = get_llm(llm)
    # The backend's own model/version is part of the key: a new extractive version must not be served old drafts.
    identity = {"name": backend.name, "model": str(getattr(backend, "model", ""))}
    report = store.get(answerability_ref, AnswerabilityReport) if answerability_ref is not None else None

    def compute() -> DraftAnswer:
        from stages.generation import generate

        return generate.generate_draft(store.get(pack_ref, ContextPack), backend, policy, report)

    return run_stage(
        store, stage="generate",
        config={"llm": dict(sorted(llm.items())), "backend": identity, "policy": config_sha256(policy)},
        inputs=(pack_ref,) if answerability_ref is None else (pack_ref, answerability_ref), backends=(backend,),
        compute=compute, force=force,
    )


@task(name="validate", cache_policy=NO_CACHE)
def validate_task(
    store_root: str, pack_ref: ArtifactRef, draft_ref: ArtifactRef, policy: GenerationPolicy, force: bool = False,
    answerability_ref: ArtifactRef | None = None, verifier: str = "citebound",
) -> RunStep:
    store = _store(store_root)
    backend = _verifier_for(policy, verifier)
    inputs = (pack_ref, draft_ref) if answerability_ref is None else (pack_ref, draft_ref, answerability_ref)

    def compute() -> Answer:
        from stages.grounding import validate

        report = store.get(answerability_ref, AnswerabilityReport) if answerability_ref is not None else None
        return validate.validate_draft(store.get(draft_ref, DraftAnswer), store.get(pack_ref, ContextPack), policy,
                                       verifier=backend, answerability=report)

    return run_stage(store, stage="validate", config=policy, inputs=inputs, backends=(backend,), compute=compute,
                     force=force)
