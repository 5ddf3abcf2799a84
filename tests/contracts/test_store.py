"""The artifact store: content addressing, atomic writes, verification on read, typed errors naming the artifact."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os

import pytest

from contracts import (
    AnswerRequest,
    ArtifactCorruptError,
    ArtifactNotFoundError,
    ArtifactRef,
    ArtifactStore,
    ContractViolationError,
    GenerationPolicy,
    RunRecord,
    cache_key,
)
from contracts import store as store_module
from contracts.errors import StorageError

pytestmark = pytest.mark.unit


def test_put_get_round_trip_and_header(store):
    ref = store.put(GenerationPolicy(min_confidence=0.4), stage="config", stage_version="config.v1",
                    config_sha256="abc", inputs=())
    assert ref.kind == "generation_policy.v4" and len(ref.sha256) == 64
    assert store.get(ref, GenerationPolicy).min_confidence == 0.4
    header = store.header(ref)
    assert (header.stage, header.stage_version, header.config_sha256, header.schema_version) == ("config", "config.v1", "abc", 1)
    assert header.created_at is not None
    assert store.get(ref).min_confidence == 0.4  # read by kind, without a type


def test_equal_content_gets_equal_address_and_file_is_not_rewritten(store):
    a = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    path = store._object_path(a.kind, a.sha256)
    before = path.read_bytes()
    b = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    assert a == b
    assert path.read_bytes() == before  # created_at of the first write survives: replays are byte-identical


def test_address_depends_on_provenance(store):
    a = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    b = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v2")
    assert a.sha256 != b.sha256


def test_missing_artifact_is_a_typed_error_naming_it(store):
    ref = ArtifactRef(kind="answer.v1", sha256="f" * 64)
    with pytest.raises(ArtifactNotFoundError, match="answer.v1:ffffffffffff"):
        store.get(ref)


def test_tampered_artifact_is_detected(store):
    ref = store.put(AnswerRequest(query="what is theft?"), stage="request", stage_version="request.v1")
    path = store._object_path(ref.kind, ref.sha256)
    doc = json.loads(path.read_text())
    doc["payload"]["query"] = "what is murder?"
    path.write_text(json.dumps(doc))
    with pytest.raises(ArtifactCorruptError, match=ref.sha256[:12]):
        store.get(ref, AnswerRequest)


def test_truncated_artifact_is_detected(store):
    ref = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    path = store._object_path(ref.kind, ref.sha256)
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(ArtifactCorruptError):
        store.get(ref)


def test_reading_as_the_wrong_type_is_refused(store):
    ref = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    with pytest.raises(ArtifactCorruptError, match="is not a generation_policy.v4"):
        store.get(ref, GenerationPolicy)


def test_refuses_to_store_non_contracts(store):
    with pytest.raises(ContractViolationError):
        store.put(None, stage="x", stage_version="x")  # type: ignore[arg-type]
    with pytest.raises(ContractViolationError):
        store.put({"kind": "x"}, stage="x", stage_version="x")  # type: ignore[arg-type]


def test_failed_write_leaves_no_partial_file_and_says_why(store, monkeypatch):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module.os, "fsync", full)
    with pytest.raises(StorageError) as info:
        store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    # A full disk is not corruption (errno 28 once read as ArtifactCorruptError), and str() carries no path.
    assert not isinstance(info.value, ArtifactCorruptError) and info.value.no_space
    assert str(info.value) == "the store cannot write: no space left on device"
    assert info.value.describe().startswith(f"cannot write {store.root}/objects/")
    leftovers = [p for p in store.root.rglob("*") if p.is_file()]
    assert leftovers == []


def test_blobs_are_verified(store):
    sha = store.put_blob(b"vectors", suffix=".npy")
    assert store.get_blob(sha) == b"vectors"
    store.blob_path(sha).write_bytes(b"vectorz")
    with pytest.raises(ArtifactCorruptError):
        store.get_blob(sha)
    with pytest.raises(ArtifactNotFoundError):
        store.get_blob("0" * 64)


def test_cache_hit_requires_a_verifiable_output(store):
    ref = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    key = cache_key("request", "request.v1", "cfg", ())
    assert store.cached(key) is None
    store.remember(key, ref)
    assert store.cached(key) == ref
    os.remove(store._object_path(ref.kind, ref.sha256))
    assert store.cached(key) is None  # a deleted output is a miss, never a wrong hit


def test_cache_key_covers_inputs_config_and_version():
    r1 = ArtifactRef(kind="a.v1", sha256="1" * 64)
    r2 = ArtifactRef(kind="a.v1", sha256="2" * 64)
    base = cache_key("chunk", "chunk.v1", "c", (r1,))
    assert base != cache_key("chunk", "chunk.v2", "c", (r1,))
    assert base != cache_key("chunk", "chunk.v1", "d", (r1,))
    assert base != cache_key("chunk", "chunk.v1", "c", (r2,))
    assert base == cache_key("chunk", "chunk.v1", "c", (r1,))


def test_resolve_by_prefix(store):
    ref = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    assert store.resolve(ref.sha256[:10]) == ref
    assert store.resolve(f"answer_request.v1:{ref.sha256[:8]}") == ref
    with pytest.raises(ArtifactNotFoundError):
        store.resolve("zzzz")


def test_pointers_and_runs(store):
    ref = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    assert store.get_pointer("index/current") is None
    store.set_pointer("index/current", ref)
    assert store.get_pointer("index/current") == ref
    run = RunRecord(run_id="r-1", flow="answer", started_at="2026-01-01T00:00:00", outputs=(ref,))
    store.put_run(run)
    assert store.get_run("r-1") == run
    assert [r.run_id for r in store.list_runs()] == ["r-1"]
    with pytest.raises(ArtifactNotFoundError):
        store.get_run("nope")


def _writer(root: str, n: int) -> None:
    s = ArtifactStore(root)
    for i in range(n):
        s.put(AnswerRequest(query=f"q{i % 5}"), stage="request", stage_version="request.v1")


def test_concurrent_writers_of_the_same_artifacts_never_corrupt(tmp_path):
    root = str(tmp_path / "s")
    procs = [multiprocessing.get_context("fork").Process(target=_writer, args=(root, 40)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    s = ArtifactStore(root)
    refs = list(s.iter_refs("answer_request.v1"))
    assert len(refs) == 5
    for r in refs:
        s.get(r, AnswerRequest)
    assert not [p for p in s.root.rglob("*.tmp")]


# ------------------------------------------------------------------------------ kinds written by older versions


def _write_raw(st, kind: str, payload: dict, stage: str = "validate"):
    """An artifact file as an older citebound wrote it (valid address, header and payload under ``kind``)."""
    header = store_module.ArtifactHeader(kind=kind, stage=stage, stage_version=f"{stage}.v1", config_sha256="")
    sha = store_module._address(header, payload)
    path = st._object_path(kind, sha)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"header": header.model_dump(mode="json"), "payload": payload}))
    return ArtifactRef(kind=kind, sha256=sha)


def _answer_v1_payload() -> dict:
    from contracts import Answer

    payload = Answer(query="q", status="success", answer="x [A]", sources=("A",)).model_dump(mode="json")
    del payload["related"]  # answer.v1 as first written: no `related`
    return {**payload, "kind": "answer.v1"}


def test_a_retired_kind_is_read_through_its_migration(store):
    from contracts import Answer

    ref = _write_raw(store, "answer.v1", _answer_v1_payload())
    answer = store.get(ref, Answer)
    assert answer.kind == "answer.v4" and answer.related == () and answer.answer == "x [A]"
    assert store.get(f"answer.v1:{ref.sha256[:10]}").kind == "answer.v4"  # by ref text, without a type too


def test_a_kind_this_version_does_not_know_is_a_typed_error_naming_it(store):
    from contracts import Answer, ArtifactKindError

    ref = _write_raw(store, "answer.v0", {**_answer_v1_payload(), "kind": "answer.v0"})
    with pytest.raises(ArtifactKindError, match=rf"answer\.v0:{ref.sha256[:12]}.*does not read"):
        store.get(ref, Answer)
    newer = _write_raw(store, "answer.v9", {**_answer_v1_payload(), "kind": "answer.v9"})
    with pytest.raises(ArtifactKindError, match=rf"answer\.v9:{newer.sha256[:12]}"):
        store.get(newer)


def test_a_retired_payload_that_does_not_migrate_is_a_typed_error(store):
    from contracts import ArtifactKindError

    payload = {**_answer_v1_payload(), "verdict": "a field answer.v2 never had"}
    ref = _write_raw(store, "answer.v1", payload)
    with pytest.raises(ArtifactKindError, match=rf"answer\.v1:{ref.sha256[:12]} .*does not migrate to answer\.v4"):
        store.get(ref)


def test_a_cached_output_of_a_retired_kind_is_a_miss(store):
    ref = _write_raw(store, "answer.v1", _answer_v1_payload())
    store.remember("k" * 64, ref)
    assert store.cached("k" * 64) is None  # recomputed by the current code, never handed on migrated


def test_a_run_record_written_before_code_versions_is_read(store):
    record = RunRecord(run_id="old-run", flow="answer", started_at="2026-01-01T00:00:00",
                       steps=(store_module.RunStep(stage="validate", stage_version="validate.v1",
                                                   config_sha256="c"),))
    payload = record.model_dump(mode="json")
    del payload["steps"][0]["code_version"]
    (store.root / "runs").mkdir(parents=True)
    (store.root / "runs" / "old-run.json").write_text(json.dumps({**payload, "kind": "run_record.v1"}))
    again = store.get_run("old-run")
    assert again.kind == "run_record.v2" and again.steps[0].code_version == ""
    assert [r.run_id for r in store.list_runs()] == ["old-run"]


def test_code_version_is_recorded_but_not_part_of_the_address(store):
    a = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1", code_version="1" * 64)
    b = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1", code_version="2" * 64)
    assert a == b and store.header(a).code_version == "1" * 64  # the first writer's code version is kept


def test_forget_removes_a_cache_entry_only_while_it_names_that_output(store):
    ref = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    other = store.put(AnswerRequest(query="r"), stage="request", stage_version="request.v1")
    key = cache_key("request", "request.v1", "cfg", (other,))
    store.remember(key, ref)
    store.forget(key, other)  # the entry names another output: it stays
    assert store.cached(key) == ref
    store.forget(key, ref)
    assert store.cached(key) is None and not list(store.cache_entries())
    store.forget(key, ref)  # forgetting an entry that is gone is no error
