"""The ``successors`` task: a context pack's older provisions matched to their successors by the store's maps.

The maps are the ones ``citebound provisions map`` remembered (pointers ``provisions/<FROM>-<TO>``); a map applies
to a pack when its older code is the code of one of the pack's chunks. The task is keyed like every stage (the
pack, the maps, the index it fetches from, the policy's quarantine switch, the derived version of
``stages/provisions/successors.py``). When nothing applies (no map for the pack's codes, no provision of the pack
that a map carries on, or ``GenerationPolicy.name_successors`` off) the task returns None: the pack goes on
unchanged and the run records no step (a store without maps runs the chain it ran before). The index is loaded
only when a successor's chunk must be fetched.
"""

from __future__ import annotations

import time
from functools import lru_cache

from contracts import (AnswerRequest, ArtifactRef, ArtifactStore, ContextPack, GenerationPolicy, RunStep, cache_key,
                       content_sha256)
from contracts.provisions import ProvisionMap
from flows.index_backends import index_identity, load_search_index
from flows.lazy_prefect import NO_CACHE, task
from flows.stage_versions import stage_version as derived_version
from flows.tasks import _store

__all__ = ["MAP_POINTER_PREFIX", "map_refs", "load_map", "successors_task"]

MAP_POINTER_PREFIX = "provisions/"


def map_refs(store: ArtifactStore, codes: frozenset[str]) -> tuple[ArtifactRef, ...]:
    """The stored maps whose older code is one of ``codes`` (case-insensitive), in pointer-name order."""
    wanted = {c.upper() for c in codes}
    out = []
    for name in sorted(store.list_pointers(MAP_POINTER_PREFIX)):
        from_code = name.removeprefix(MAP_POINTER_PREFIX).split("-", 1)[0]
        if from_code.upper() in wanted:
            ref = store.get_pointer(name)
            if ref is not None:
                out.append(ref)
    return tuple(out)


@lru_cache(maxsize=16)
def load_map(store_root: str, ref: ArtifactRef) -> ProvisionMap:
    """One stored map, read once per process (artifacts are immutable: a ref names one content)."""
    return _store(store_root).get(ref, ProvisionMap)


def _index(store_root: str, index_ref: ArtifactRef, embedder_name: str):  # noqa: ANN202 - IndexBackend
    if index_ref.kind == "index_view.v1":
        from flows.index_views import load_view

        return load_view(store_root, index_ref, embedder_name).index
    return load_search_index(store_root, index_ref, embedder_name)


@task(name="successors", cache_policy=NO_CACHE)
def successors_task(
    store_root: str, pack_ref: ArtifactRef, request_ref: ArtifactRef, index_ref: ArtifactRef | None,
    policy: GenerationPolicy, embedder_name: str = "minilm", force: bool = False,
) -> RunStep | None:
    """The pack with its successor notes and the successors' chunks (``stages.provisions.successors``), fetched in
    the request's tenant and project; None when no map applies to the pack."""
    from stages.provisions import successors

    store = _store(store_root)
    started = time.perf_counter()
    pack = store.get(pack_ref, ContextPack)
    refs = map_refs(store, frozenset(c.provenance.doc_code for c in pack.chunks)) if policy.name_successors else ()
    maps = [load_map(store_root, ref) for ref in refs]
    if not maps or not successors.successor_notes(pack, maps):
        return None  # nothing to add: the pack goes on as it is
    # Only now the index's identity (a few store reads): it keys the step, as the backend a fetch runs on.
    backends = (index_identity(store, index_ref),) if index_ref is not None else ()
    version = derived_version("successors", backends=backends)
    config = content_sha256({"quarantine_flagged": policy.quarantine_flagged})
    inputs = (pack_ref, request_ref, *refs) + ((index_ref,) if index_ref is not None else ())

    def step(output: ArtifactRef, cached: bool) -> RunStep:
        return RunStep(stage="successors", stage_version=version.label, code_version=version.code,
                       config_sha256=config, inputs=inputs, output=output, cached=cached,
                       seconds=round(time.perf_counter() - started, 4))

    key = cache_key("successors", version.label, config, inputs, version.code)
    hit = None if force else store.cached(key)
    if hit is not None:
        return step(hit, cached=True)
    request = store.get(request_ref, AnswerRequest)
    index = _index(store_root, index_ref, embedder_name) if index_ref is not None else None
    out = successors.add_successors(pack, maps, index, tenant_id=request.tenant_id, project_id=request.project_id,
                                    quarantine_flagged=policy.quarantine_flagged)
    ref = store.put(out, stage="successors", stage_version=version.label, config_sha256=config, inputs=inputs,
                    code_version=version.code)
    store.remember(key, ref)
    return step(ref, cached=False)
