"""Build the map of an older code's sections to a newer code's (``stages.provisions``), cached like every stage.

Each code is read from a file given (a PDF, the civictech JSON, a text file) or, without one, from the source of
the ingested document with that doc code. Two stages run under ``run_stage``: ``provisions`` (one code's sections,
keyed by its source artifact) and ``align_provisions`` (keyed by the two sets, the align config and the embedder),
so building the same map twice computes nothing, and ``--force`` recomputes to the same address. The map is
remembered under the pointer ``provisions/<FROM>-<TO>`` and the run is recorded (``citebound runs``).
"""

from __future__ import annotations

from pathlib import Path

from contracts import ArtifactRef, ArtifactStore, Catalog, SourceDocument
from contracts.errors import IngestError
from contracts.provisions import AlignConfig, ProvisionMap, ProvisionSet, ProvisionsError, ProvisionText
from flows.backends import get_embedder
from flows.runs import RunRecorder
from flows.tasks import run_stage

__all__ = ["map_pointer", "provisions_step", "align_step", "build_provision_map", "stored_map"]


def map_pointer(from_code: str, to_code: str) -> str:
    """The pointer a built map is remembered under."""
    return f"provisions/{from_code.upper()}-{to_code.upper()}"


def _source(store: ArtifactStore, code: str, path: str | None) -> ArtifactRef:
    """The source artifact of one code: the file given, or the ingested document whose doc code is ``code``."""
    from stages.ingest.extract import make_source_document

    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ProvisionsError(f"{path}: no such file")
        data = p.read_bytes()
        name = str(p.resolve())
    else:
        from flows.ingest_flow import CATALOG_POINTER

        ref = store.get_pointer(CATALOG_POINTER)
        entries = [e for e in (store.get(ref, Catalog).entries if ref else ()) if e.doc_code.upper() == code.upper()]
        if not entries:
            raise ProvisionsError(f"no ingested document has doc code {code!r}: ingest it, or give its file")
        entry = entries[0]
        data, name = store.get_blob(entry.doc_sha256), entry.path
    try:
        source = make_source_document(name, data, doc_code=code)
    except IngestError as exc:
        raise ProvisionsError(f"{code}: {exc}") from exc
    store.put_blob(data, suffix=Path(name).suffix.lower() or ".bin")
    return run_stage(store, stage="source", config={}, inputs=(), compute=lambda: source, force=True).output


def provisions_step(store: ArtifactStore, source_ref: ArtifactRef, force: bool = False):  # noqa: ANN201 - RunStep
    """One code's sections from its stored source (the ``provisions`` stage)."""
    from stages.provisions.parse import sections_from_bytes

    def compute() -> ProvisionSet:
        source = store.get(source_ref, SourceDocument)
        try:
            found = sections_from_bytes(store.get_blob(source.sha256), source.media_type)
        except ValueError as exc:
            raise ProvisionsError(f"{source.doc_code} ({source.filename}): {exc}") from exc
        return ProvisionSet(code=source.doc_code, source_sha256=source.sha256,
                            provisions=tuple(ProvisionText(section=s, title=t, text=x) for s, t, x in found))

    return run_stage(store, stage="provisions", config={}, inputs=(source_ref,), compute=compute, force=force)


def align_step(store: ArtifactStore, from_ref: ArtifactRef, to_ref: ArtifactRef, cfg: AlignConfig,
               embedder_name: str = "minilm", force: bool = False):  # noqa: ANN201 - RunStep
    """The map of one stored set to another (the ``align_provisions`` stage)."""
    from stages.provisions.align import build_map

    embedder = get_embedder(embedder_name)
    config = {"align": cfg.model_dump(mode="json"), "model": embedder.model_name, "revision": embedder.model_revision}

    def compute() -> ProvisionMap:
        return build_map(store.get(from_ref, ProvisionSet), store.get(to_ref, ProvisionSet), embedder, cfg,
                         from_set_sha256=from_ref.sha256, to_set_sha256=to_ref.sha256)

    return run_stage(store, stage="align_provisions", config=config, inputs=(from_ref, to_ref), compute=compute,
                     force=force, backends=(embedder,))


def build_provision_map(
    store_root: str, from_code: str, to_code: str, *, from_path: str | None = None, to_path: str | None = None,
    cfg: AlignConfig | None = None, embedder_name: str = "minilm", force: bool = False,
) -> tuple[ArtifactRef, ProvisionMap]:
    """Read both codes, align them, remember the map under ``map_pointer`` and record the run."""
    if from_code.upper() == to_code.upper():
        raise ProvisionsError("--from and --to name the same code")
    store = ArtifactStore(store_root)
    cfg = cfg or AlignConfig()
    recorder = RunRecorder(store, flow="provisions", parameters={
        "from": from_code, "to": to_code, "from_path": from_path or "", "to_path": to_path or ""})
    try:
        refs = []
        for code, path in ((from_code, from_path), (to_code, to_path)):
            step = provisions_step(store, _source(store, code, path), force=force)
            recorder.steps.append(step)
            refs.append(step.output)
        step = align_step(store, refs[0], refs[1], cfg, embedder_name, force=force)
        recorder.steps.append(step)
    except BaseException as exc:
        recorder.finish(outputs=[], status="failed", error=f"{type(exc).__name__}: {exc}")
        raise
    store.set_pointer(map_pointer(from_code, to_code), step.output)
    recorder.finish(outputs=[step.output])
    return step.output, store.get(step.output, ProvisionMap)


def stored_map(store_root: str, from_code: str, to_code: str) -> tuple[ProvisionMap, ProvisionSet, ProvisionSet]:
    """The map last built for the two codes, with both sets (for their texts)."""
    store = ArtifactStore(store_root)
    ref = store.get_pointer(map_pointer(from_code, to_code))
    if ref is None:
        raise ProvisionsError(f"no map from {from_code} to {to_code} in this store: run "
                              f"`citebound provisions map --from {from_code} --to {to_code}` first")
    pmap = store.get(ref, ProvisionMap)
    older = store.get(ArtifactRef(kind="provision_set.v1", sha256=pmap.from_set_sha256), ProvisionSet)
    newer = store.get(ArtifactRef(kind="provision_set.v1", sha256=pmap.to_set_sha256), ProvisionSet)
    return pmap, older, newer
