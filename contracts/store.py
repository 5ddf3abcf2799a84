"""The artifact store: citebound's one IO boundary.

Layout under ``root`` (all writes atomic: temp file in the same folder, fsync, ``os.replace``)::

    objects/<kind>/<sha[:2]>/<sha>.json   one contract: {"header": ..., "payload": ...}
    blobs/<sha[:2]>/<sha><suffix>         binary sidecars (FAISS index, vectors .npy, BM25, source bytes)
    cache/<key[:2]>/<key>.json            stage cache: (stage, version, config, inputs) -> output ref
    pointers/<name>.json                  named, movable refs (e.g. the current index of a tenant)
    runs/<run_id>.json                    one run record per flow run: its parameters and the refs it produced

An artifact's address is the sha256 of the canonical JSON of its header (without ``created_at``) and
payload. Writing an artifact whose address already exists keeps the first file, so re-running a stage
on unchanged inputs leaves byte-identical files. Every failure is raised as a typed error that names
the artifact.

Why long: this is the one IO boundary. Objects, blobs, cache entries, pointers, locks and run records share
the atomic write, the address scheme and the typed errors, and keeping every file the store touches in one
module is what lets no other module touch one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import Field, TypeAdapter, ValidationError

from contracts._base import Contract, canonical_json, content_sha256, sha256_bytes
from contracts.answer import Answer, DraftAnswer, GenerationPolicy
from contracts.generation import GenerationRequest
from contracts.verifier import AnswerabilityReport, VerifierCard, VerifierTrainConfig
from contracts.catalog import AnswerRequest, Catalog, IngestReport
from contracts.config import (
    ChunkConfig,
    CleanConfig,
    EmbedConfig,
    ExtractConfig,
    IndexConfig,
    ProjectSettings,
    RetrieveConfig,
)
from contracts.errors import (
    ArtifactCorruptError,
    ArtifactKindError,
    ArtifactNotFoundError,
    ContractViolationError,
    StorageError,
)
from contracts.evaluation import EvalFloors, EvalReport, SuiteReport
from contracts.index import EmbeddingSet, IndexManifest, IndexView
from contracts.ingest import ChunkSet, CleanedDocument, ExtractedDocument, SourceDocument
from contracts.provisions import ProvisionMap, ProvisionSet
from contracts.handwritten import HandwrittenSetCard
from contracts.questions import CompletionRequest, Provision, QuestionBatch, QuestionSetCard
from contracts.reader import ReaderModelCard
from contracts.retrieval import ContextPack, RetrievalResult

__all__ = [
    "atomic_write",
    "SCHEMA_VERSION",
    "ArtifactRef",
    "ArtifactHeader",
    "RunStep",
    "RunRecord",
    "ArtifactStore",
    "StoredContract",
    "KINDS",
    "RETIRED_KINDS",
    "kind_of",
    "parse_stored",
    "cache_key",
]

SCHEMA_VERSION = 1
T = TypeVar("T", bound=Contract)
# Writers' locks (by file) this process holds exclusively: see ArtifactStore.writers.
_EXCLUSIVE_HELD: set[str] = set()
_EXCLUSIVE_GUARD = threading.Lock()
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.=-]+(/[A-Za-z0-9_.=-]+)*$")


def kind_of(model: type[Contract]) -> str:
    """The kind a contract class writes, e.g. ``kind_of(Answer) == "answer.v2"``."""
    return model.model_fields["kind"].default


class ArtifactRef(Contract):
    """What tasks hand each other: the kind and address of a stored artifact."""

    kind: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    def __str__(self) -> str:
        return f"{self.kind}:{self.sha256[:12]}"


class ArtifactHeader(Contract):
    """An artifact's provenance. ``stage_version`` is the stage's label (``STAGE_VERSION``); ``code_version``
    the code-derived version it ran under (``flows/stage_versions.py``). Like ``created_at``, ``code_version``
    is not part of the address: the same output from edited code keeps its address, so stages after it stay
    cached (the header keeps the first writer's code version)."""

    kind: str
    schema_version: int = SCHEMA_VERSION
    stage: str
    stage_version: str
    config_sha256: str
    input_refs: tuple[ArtifactRef, ...] = ()
    created_at: str | None = None
    code_version: str | None = None


# Header fields outside an artifact's address.
_UNADDRESSED = frozenset({"created_at", "code_version"})


class RunStep(Contract):
    """One stage of a run: ``stage_version`` is its label, ``code_version`` the derived version that keyed it."""

    stage: str
    stage_version: str
    code_version: str = ""
    config_sha256: str
    inputs: tuple[ArtifactRef, ...] = ()
    output: ArtifactRef | None = None
    cached: bool = False
    seconds: float = 0.0
    error: str | None = None


class RunRecord(Contract):
    """What one flow run did: its parameters and every artifact it read and wrote (its replay entry points)."""

    kind: Literal["run_record.v2"] = "run_record.v2"
    run_id: str
    flow: str
    started_at: str
    finished_at: str | None = None
    status: Literal["running", "completed", "failed"] = "completed"
    question: str | None = None
    parameters: tuple[tuple[str, str], ...] = ()
    steps: tuple[RunStep, ...] = ()
    outputs: tuple[ArtifactRef, ...] = ()
    replay_of: str | None = None
    error: str | None = None


# Every kind the store reads, listed by hand: one discriminated union, one TypeAdapter (no module scanning).
# tests/contracts/test_models.py checks that every contract with a kind is listed here.
_STORED_TYPES: tuple[type[Contract], ...] = (
    SourceDocument, ExtractedDocument, CleanedDocument, ChunkSet,
    EmbeddingSet, IndexManifest, IndexView,
    AnswerRequest, RetrievalResult, ContextPack, AnswerabilityReport, GenerationRequest, DraftAnswer, Answer,
    VerifierTrainConfig, VerifierCard,
    ExtractConfig, CleanConfig, ChunkConfig, EmbedConfig, IndexConfig, RetrieveConfig, GenerationPolicy,
    ProjectSettings, Catalog, IngestReport, RunRecord,
    EvalReport, SuiteReport, EvalFloors,
    ProvisionSet, ProvisionMap,
    CompletionRequest, Provision, QuestionBatch, QuestionSetCard, HandwrittenSetCard, ReaderModelCard,
)
StoredContract = Annotated[Union[_STORED_TYPES], Field(discriminator="kind")]  # noqa: UP007 - a tuple of types
_READER: TypeAdapter[Contract] = TypeAdapter(StoredContract)
KINDS: dict[str, type[Contract]] = {kind_of(t): t for t in _STORED_TYPES}

# Kinds this version no longer writes -> the contract that replaced them. A kind is bumped when a field is added;
# reading the old kind is this explicit migration: the payload is validated as its successor, so the fields added
# since take their defaults (today's behaviour, e.g. a v1 RetrieveConfig replays with today's dense_weight).
# A retired payload that does not fit its successor, and any kind not listed here or in KINDS (an older or a
# newer citebound's), raises ArtifactKindError naming kind:sha: re-run the stage that wrote it.
RETIRED_KINDS: dict[str, type[Contract]] = {
    "answer.v3": Answer,  # + Citation.successors
    "context_pack.v2": ContextPack,  # + successors, fetched
    "generation_policy.v3": GenerationPolicy,  # + name_successors
    "answer.v1": Answer,  # + related
    "answer.v2": Answer,  # + answerability (the verifier)
    "generation_policy.v2": GenerationPolicy,  # + verify, min_answerability, min_support, close margin
    "draft_answer.v1": DraftAnswer,  # + request_sha256, prompt (the typed generation port)
    "generation_policy.v1": GenerationPolicy,  # + check_key_terms, key_terms
    "chunk_config.v1": ChunkConfig,  # + title_weight
    "retrieve_config.v1": RetrieveConfig,  # + dense_weight, intent/act/qualifier weights, long-query fields
    "retrieval_result.v1": RetrievalResult,  # + QueryAnalysis.acts/qualifiers, ResultMetadata.flags
    "context_pack.v1": ContextPack,  # + QueryAnalysis.acts/qualifiers
    "extract_config.v1": ExtractConfig,  # + ocr_other_langs, judge_legibility
    "extracted_document.v1": ExtractedDocument,  # + PageText.section_id/section_title
    "cleaned_document.v1": CleanedDocument,  # + Section.level "front_matter", "exercise"
    "ingest_report.v1": IngestReport,  # + FileIngestReport.n_front_matter, n_exercise, notes
    "run_record.v1": RunRecord,  # + RunStep.code_version
    "index_manifest.v1": IndexManifest,  # + backend, location, collection (FAISS by default)
    "provision_map.v1": ProvisionMap,  # + to_commencement, AlignConfig.common_term_share, link reason, shared terms
}


def parse_stored(payload: Any, name: str) -> Contract:
    """Validate a stored payload by its kind (migrating a retired kind); ``name`` (kind:sha) goes into errors."""
    kind = payload.get("kind") if isinstance(payload, dict) else None
    successor = RETIRED_KINDS.get(kind) if isinstance(kind, str) else None
    if successor is not None:
        payload = {**payload, "kind": kind_of(successor)}
    elif kind not in KINDS:
        raise ArtifactKindError(
            f"artifact {name} has kind {kind!r}, which this version of citebound does not read: "
            "re-run the stage that wrote it")
    try:
        return _READER.validate_python(payload)
    except ValidationError as exc:
        if successor is not None:
            raise ArtifactKindError(
                f"artifact {name} was written as {kind} and does not migrate to {kind_of(successor)}: "
                f"re-run the stage that wrote it ({exc.error_count()} field errors)") from exc
        raise ArtifactCorruptError(f"artifact {name} does not fit {KINDS[kind].__name__}: {exc}") from exc


def cache_key(
    stage: str, stage_version: str, config_sha256: str, inputs: tuple[ArtifactRef, ...], code_version: str = ""
) -> str:
    """Cache/replay key: the input artifacts' hashes + the stage config hash + the stage's label and code version."""
    parts: dict[str, object] = {
        "stage": stage,
        "stage_version": stage_version,
        "config": config_sha256,
        "inputs": [r.sha256 for r in inputs],
    }
    if code_version:
        parts["code_version"] = code_version
    return content_sha256(parts)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (temp file beside it, fsync, ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        # Never leave a half-written temp file behind, whatever interrupted us.
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write(path: Path, data: bytes) -> None:
    """``atomic_write`` for the store: a refusal of the file system is a StorageError naming path and cause."""
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise StorageError("write", path, exc) from exc


def _read_bytes(path: Path, name: str) -> bytes:
    """A stored file's bytes: missing is ArtifactNotFoundError, refused (permission) a StorageError, an I/O error
    of the medium an ArtifactCorruptError (messages name ``name``, never the path)."""
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise ArtifactNotFoundError(f"{name} not found") from exc
    except PermissionError as exc:
        raise StorageError("read", path, exc) from exc
    except OSError as exc:
        raise ArtifactCorruptError(f"{name} is unreadable ({exc.strerror or type(exc).__name__})") from exc


def _address(header: ArtifactHeader, payload: dict) -> str:
    hashed_header = header.model_dump(mode="json", exclude=set(_UNADDRESSED))
    return content_sha256({"header": hashed_header, "payload": payload})


class ArtifactStore:
    """Content-addressed store of contracts and blobs. Safe for concurrent writers of distinct artifacts.

    >>> import tempfile; from contracts.answer import GenerationPolicy
    >>> store = ArtifactStore(tempfile.mkdtemp())
    >>> ref = store.put(GenerationPolicy(), stage="test", stage_version="t.v1")
    >>> store.get(ref, GenerationPolicy) == GenerationPolicy()
    True
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().resolve()

    # ----------------------------------------------------------------- contracts
    def _object_path(self, kind: str, sha: str) -> Path:
        return self.root / "objects" / kind / sha[:2] / f"{sha}.json"

    def put(
        self,
        model: Contract,
        *,
        stage: str,
        stage_version: str,
        config_sha256: str = "",
        inputs: tuple[ArtifactRef, ...] = (),
        code_version: str | None = None,
    ) -> ArtifactRef:
        """Store ``model`` with its provenance header; return its ref. Idempotent for equal content."""
        if model is None or not isinstance(model, Contract):
            raise ContractViolationError(f"refusing to store {type(model).__name__}: not a contract")
        kind = getattr(model, "kind", None)
        if not isinstance(kind, str):
            raise ContractViolationError(f"refusing to store {type(model).__name__}: it has no kind")
        header = ArtifactHeader(
            kind=kind,
            stage=stage,
            stage_version=stage_version,
            config_sha256=config_sha256,
            input_refs=tuple(inputs),
            created_at=_now(),
            code_version=code_version,
        )
        payload = model.model_dump(mode="json")
        sha = _address(header, payload)
        path = self._object_path(kind, sha)
        if not path.exists():
            doc = {"header": header.model_dump(mode="json"), "payload": payload}
            _write(path, json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=1).encode())
        return ArtifactRef(kind=kind, sha256=sha)

    def _locate(self, ref: ArtifactRef | str) -> tuple[str, str, Path]:
        if isinstance(ref, ArtifactRef):
            return ref.kind, ref.sha256, self._object_path(ref.kind, ref.sha256)
        sha = ref.split(":", 1)[-1]
        if not _SHA_RE.match(sha):
            return self._locate(self.resolve(ref))
        hits = list((self.root / "objects").glob(f"*/{sha[:2]}/{sha}.json"))
        if not hits:
            raise ArtifactNotFoundError(f"no artifact {sha[:12]} in the store")
        path = hits[0]
        return path.parent.parent.name, sha, path

    def _read(self, ref: ArtifactRef | str) -> tuple[ArtifactHeader, dict, str, str]:
        kind, sha, path = self._locate(ref)
        name = f"{kind}:{sha[:12]}"
        raw = _read_bytes(path, f"artifact {name}")
        try:
            doc = json.loads(raw)
            header = ArtifactHeader.model_validate(doc["header"])
            payload = doc["payload"]
            stated = payload.get("kind")
        except (ValueError, KeyError, TypeError, AttributeError, ValidationError) as exc:
            raise ArtifactCorruptError(f"artifact {name} is not a valid artifact file ({type(exc).__name__})") from exc
        if header.kind != kind or stated != kind:
            raise ArtifactCorruptError(f"artifact {name} says kind {header.kind!r}")
        if _address(header, payload) != sha:
            raise ArtifactCorruptError(f"artifact {name} does not match its sha256 (tampered or truncated)")
        return header, payload, kind, sha

    def get(self, ref: ArtifactRef | str, model_type: type[T] | None = None) -> T:
        """Read, verify (hash, schema) and parse an artifact by its kind through the one union of stored kinds.

        ``model_type`` is what the caller expects: another kind is an ArtifactCorruptError. Raises
        ArtifactNotFoundError, ArtifactCorruptError or ArtifactKindError (a kind this version cannot read).
        """
        return self.load(ref, model_type)[1]

    def load(self, ref: ArtifactRef | str, model_type: type[T] | None = None) -> tuple[ArtifactHeader, T]:
        """``get``, with the artifact's header (its provenance: ``citebound fsck`` follows ``input_refs``)."""
        header, payload, kind, sha = self._read(ref)
        name = f"{kind}:{sha[:12]}"
        if header.schema_version != SCHEMA_VERSION:
            raise ArtifactCorruptError(
                f"artifact {name} has schema version {header.schema_version}, expected {SCHEMA_VERSION}"
            )
        model = parse_stored(payload, name)
        if model_type is not None and not isinstance(model, model_type):
            raise ArtifactCorruptError(f"artifact {name} is not a {kind_of(model_type)}")
        return header, model  # type: ignore[return-value]

    def header(self, ref: ArtifactRef | str) -> ArtifactHeader:
        return self._read(ref)[0]

    def ref_of(self, ref: ArtifactRef | str) -> ArtifactRef:
        kind, sha, path = self._locate(ref)
        if not path.exists():
            raise ArtifactNotFoundError(f"artifact {kind}:{sha[:12]} not found")
        return ArtifactRef(kind=kind, sha256=sha)

    def exists(self, ref: ArtifactRef) -> bool:
        return self._object_path(ref.kind, ref.sha256).exists()

    def resolve(self, text: str) -> ArtifactRef:
        """Resolve ``kind:prefix``, a bare sha prefix (>= 6 hex chars) or a full sha to exactly one ref."""
        kind, _, prefix = text.rpartition(":")
        prefix = prefix.lower()
        if not re.fullmatch(r"[0-9a-f]{6,64}", prefix):
            raise ArtifactNotFoundError(f"{text!r} is not an artifact reference (want [kind:]sha256-prefix)")
        pattern = f"{kind or '*'}/{prefix[:2]}/{prefix}*.json"
        hits = sorted((self.root / "objects").glob(pattern))
        if not hits:
            raise ArtifactNotFoundError(f"no artifact matches {text!r} in the store")
        if len(hits) > 1:
            raise ArtifactNotFoundError(f"{text!r} is ambiguous: {len(hits)} artifacts match")
        return ArtifactRef(kind=hits[0].parent.parent.name, sha256=hits[0].stem)

    def iter_refs(self, kind: str) -> Iterator[ArtifactRef]:
        for path in sorted((self.root / "objects" / kind).glob("*/*.json")):
            yield ArtifactRef(kind=kind, sha256=path.stem)

    # ----------------------------------------------------------------- blobs
    def _blob_dir(self, sha: str) -> Path:
        return self.root / "blobs" / sha[:2]

    def put_blob(self, data: bytes, suffix: str = ".bin") -> str:
        """Store bytes under their sha256; returns the sha."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ContractViolationError(f"put_blob wants bytes, got {type(data).__name__}")
        data = bytes(data)
        sha = sha256_bytes(data)
        path = self._blob_dir(sha) / f"{sha}{suffix}"
        if not path.exists():
            _write(path, data)
        return sha

    def blob_path(self, sha: str) -> Path:
        hits = list(self._blob_dir(sha).glob(f"{sha}*")) if _SHA_RE.match(sha) else []
        hits = [h for h in hits if not h.name.startswith(".")]
        if not hits:
            raise ArtifactNotFoundError(f"blob {sha[:12]} not found in the store")
        return hits[0]

    def get_blob(self, sha: str) -> bytes:
        """Read a blob and verify its hash."""
        data = _read_bytes(self.blob_path(sha), f"blob {sha[:12]}")
        if sha256_bytes(data) != sha:
            raise ArtifactCorruptError(f"blob {sha[:12]} does not match its sha256 (tampered or truncated)")
        return data

    def has_blob(self, sha: str) -> bool:
        try:
            self.blob_path(sha)
        except ArtifactNotFoundError:
            return False
        return True

    # ----------------------------------------------------------------- stage cache
    def _cache_path(self, key: str) -> Path:
        return self.root / "cache" / key[:2] / f"{key}.json"

    def cached(self, key: str) -> ArtifactRef | None:
        """The output ref recorded for a cache key, if it and its artifact still exist and verify."""
        path = self._cache_path(key)
        if not path.exists():
            return None
        try:
            ref = ArtifactRef.model_validate_json(path.read_bytes())
            self._read(ref)  # verify: a corrupt or deleted output is a miss, never a wrong hit
        except (ValueError, ValidationError, ArtifactNotFoundError, ArtifactCorruptError):
            return None
        if ref.kind not in KINDS:
            return None  # written as a kind since retired: recompute rather than hand on a migrated old output
        return ref

    def remember(self, key: str, ref: ArtifactRef) -> None:
        _write(self._cache_path(key), canonical_json(ref))

    def forget(self, key: str, ref: ArtifactRef) -> None:
        """Remove the cache entry ``key`` if it still records ``ref`` (whose artifact is being deleted)."""
        path = self._cache_path(key)
        try:
            if ArtifactRef.model_validate_json(path.read_bytes()) != ref:
                return
        except (OSError, ValueError, ValidationError):
            return
        self._unlink(path)

    # ----------------------------------------------------------------- pointers
    def _pointer_path(self, name: str) -> Path:
        if not _NAME_RE.match(name):
            raise ContractViolationError(f"bad pointer name {name!r}")
        return self.root / "pointers" / f"{name}.json"

    def set_pointer(self, name: str, ref: ArtifactRef) -> None:
        _write(self._pointer_path(name), canonical_json(ref))

    def get_pointer(self, name: str) -> ArtifactRef | None:
        path = self._pointer_path(name)
        if not path.exists():
            return None
        raw = _read_bytes(path, f"pointer {name}")
        try:
            return ArtifactRef.model_validate_json(raw)
        except (ValueError, ValidationError) as exc:
            raise ArtifactCorruptError(f"pointer {name} is corrupt ({type(exc).__name__})") from exc

    def delete_pointer(self, name: str) -> None:
        path = self._pointer_path(name)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise StorageError("delete", path, exc) from exc

    def list_pointers(self, prefix: str = "") -> list[str]:
        base = self.root / "pointers"
        names = [str(p.relative_to(base))[: -len(".json")] for p in base.rglob("*.json")] if base.exists() else []
        return sorted(n for n in names if n.startswith(prefix))

    # ----------------------------------------------------------------- locks
    def _lock_file(self, name: str):  # noqa: ANN202 - an open binary file
        if not _NAME_RE.match(name):
            raise ContractViolationError(f"bad lock name {name!r}")
        path = self.root / "locks" / f"{name}.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return open(path, "a+b")  # noqa: SIM115 - closed by the caller's context
        except OSError as exc:
            raise StorageError("lock", path, exc) from exc

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """An exclusive inter-process lock (flock) for read-modify-write of pointers, e.g. the index. Threads of
        one process exclude each other too (each takes it on its own open file)."""
        with self._lock_file(name) as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    @contextlib.contextmanager
    def writers(self, *, exclusive: bool = False, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """The writers' lock: shared by everything that writes blobs or upload copies it will later reference
        (ingest, remove, an API upload), exclusive for what deletes unreferenced ones (``citebound gc``) or
        re-derives (``citebound repair``), so a sweep never sees a blob between its write and the catalog that
        references it. A process holding it exclusively takes it again at once, in either mode (repair
        re-ingests). ``on_wait`` is called once if the lock is not free at once (to tell a person why we wait)."""
        key = str(self.root / "locks" / "writers.lock")
        with _EXCLUSIVE_GUARD:
            if key in _EXCLUSIVE_HELD:
                yield
                return
        with self._lock_file("writers") as fh:
            mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
            try:
                fcntl.flock(fh.fileno(), mode | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                fcntl.flock(fh.fileno(), mode)
            if exclusive:
                with _EXCLUSIVE_GUARD:
                    _EXCLUSIVE_HELD.add(key)
            try:
                yield
            finally:
                if exclusive:
                    with _EXCLUSIVE_GUARD:
                        _EXCLUSIVE_HELD.discard(key)
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    # ----------------------------------------------------------------- runs
    def put_run(self, run: RunRecord) -> None:
        if not _NAME_RE.match(run.run_id):
            raise ContractViolationError(f"bad run id {run.run_id!r}")
        _write(self.root / "runs" / f"{run.run_id}.json", run.model_dump_json(indent=1).encode())

    def get_run(self, run_id: str) -> RunRecord:
        path = self.root / "runs" / f"{run_id}.json"
        if not _NAME_RE.match(run_id) or not path.exists():
            matches = sorted((self.root / "runs").glob(f"{run_id}*.json")) if _NAME_RE.match(run_id) else []
            if len(matches) != 1:
                raise ArtifactNotFoundError(f"no run {run_id!r} in the store")
            path = matches[0]
        return self._read_run(path)

    @staticmethod
    def _read_run(path: Path) -> RunRecord:
        try:
            payload = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise ArtifactCorruptError(f"run record {path.name} is corrupt: {exc}") from exc
        record = parse_stored(payload, f"run record {path.stem}")
        if not isinstance(record, RunRecord):
            raise ArtifactCorruptError(f"run record {path.name} holds a {type(record).__name__}")
        return record

    def list_runs(self) -> list[RunRecord]:
        runs = []
        for path in (self.root / "runs").glob("*.json") if (self.root / "runs").exists() else []:
            try:
                runs.append(self._read_run(path))
            except ArtifactCorruptError:
                continue
        return sorted(runs, key=lambda r: r.started_at)


    # ----------------------------------------------------------------- housekeeping (fsck, repair, gc)
    def object_names(self) -> Iterator[tuple[str, str]]:
        """(kind, sha) of every object file, whatever it holds (fsck reads each through ``get``)."""
        base = self.root / "objects"
        for path in sorted(base.glob("*/*/*.json")) if base.exists() else []:
            if _SHA_RE.match(path.stem):
                yield path.parent.parent.name, path.stem

    def blob_names(self) -> Iterator[tuple[str, int]]:
        """(sha, size in bytes) of every blob file."""
        base = self.root / "blobs"
        for path in sorted(base.glob("*/*")) if base.exists() else []:
            sha = path.name[:64]
            if not path.name.startswith(".") and _SHA_RE.match(sha) and path.is_file():
                yield sha, path.stat().st_size

    def blob_size(self, sha: str) -> int:
        """The size of a stored blob (0 when it is missing)."""
        try:
            return self.blob_path(sha).stat().st_size
        except (ArtifactNotFoundError, OSError):
            return 0

    def cache_entries(self) -> Iterator[tuple[str, ArtifactRef | None]]:
        """(key, the ref it records, or None when the entry does not parse) of every stage-cache entry."""
        base = self.root / "cache"
        for path in sorted(base.glob("*/*.json")) if base.exists() else []:
            try:
                yield path.stem, ArtifactRef.model_validate_json(path.read_bytes())
            except (OSError, ValueError, ValidationError):
                yield path.stem, None

    def run_names(self) -> list[str]:
        base = self.root / "runs"
        return sorted(p.stem for p in base.glob("*.json")) if base.exists() else []

    def upload_files(self) -> list[Path]:
        """Every file under ``uploads/`` (the API's copies of uploaded files), temporary ones included."""
        base = self.root / "uploads"
        return sorted(p for p in base.rglob("*") if p.is_file()) if base.exists() else []

    def stray_files(self, older_than_s: float) -> list[Path]:
        """Temporary files a killed writer left (``.name.*.tmp`` beside objects, blobs, pointers, cache entries,
        runs; ``.name.part`` uploads) that are older than ``older_than_s`` (younger ones may be being written)."""
        import time

        cutoff = time.time() - older_than_s
        found = []
        for folder in ("objects", "blobs", "pointers", "cache", "runs", "uploads"):
            base = self.root / folder
            for path in base.rglob(".*") if base.exists() else []:
                if path.is_file() and path.name.endswith((".tmp", ".part")) and path.stat().st_mtime < cutoff:
                    found.append(path)
        return sorted(found)

    def _unlink(self, path: Path) -> int:
        if self.root not in path.parents:
            raise ContractViolationError("refusing to delete a file outside the store")
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise StorageError("delete", path, exc) from exc
        return size

    def delete_object(self, kind: str, sha: str) -> int:
        """Remove one object file (repair: it does not verify); the bytes freed."""
        return self._unlink(self._object_path(kind, sha))

    def delete_blob(self, sha: str) -> int:
        """Remove one blob (gc: unreferenced; repair: it does not verify); the bytes freed."""
        hits = [h for h in self._blob_dir(sha).glob(f"{sha}*") if not h.name.startswith(".")] if _SHA_RE.match(sha) else []
        return sum(self._unlink(h) for h in hits)

    def delete_run(self, run_id: str) -> int:
        if not _NAME_RE.match(run_id):
            raise ContractViolationError(f"bad run id {run_id!r}")
        return self._unlink(self.root / "runs" / f"{run_id}.json")

    def delete_cache_entry(self, key: str) -> int:
        return self._unlink(self._cache_path(key))

    def delete_file(self, path: Path) -> int:
        """Remove a file of the store by path (an upload copy, a stray temporary file)."""
        return self._unlink(Path(path))
