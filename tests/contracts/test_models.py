"""Every contract: JSON round-trip, frozen, closed to unknown fields, versioned kind, stable content ids."""

from __future__ import annotations

import pydantic
import pytest

import contracts
from contracts import (
    Answer,
    Chunk,
    ChunkProvenance,
    ChunkSet,
    ContextPack,
    GenerationPolicy,
    QueryAnalysis,
    SourceDocument,
    canonical_json,
    content_sha256,
)
from contracts._base import Contract
from contracts.store import KINDS, RETIRED_KINDS

pytestmark = pytest.mark.unit


def _source(**kw) -> SourceDocument:
    base = dict(path="/x/ipc.pdf", filename="ipc.pdf", sha256="a" * 64, size_bytes=10,
                media_type="application/pdf", doc_code="IPC", tenant_id="t1", project_id="p1")
    base.update(kw)
    return SourceDocument(**base)


def _chunk(text: str = "Whoever cheats shall be punished.", sid: str = "IPC_420_0") -> Chunk:
    prov = ChunkProvenance(doc_hash="a" * 64, filename="ipc.pdf", doc_code="IPC", page=3, page_end=3,
                           char_start=0, char_end=len(text), section_id="420", section_title="Cheating",
                           origin="text_layer", tenant_id="t1", project_id="p1")
    return Chunk(semantic_id=sid, chunk_id="c" * 64, content_sha256="d" * 64, text=text, provenance=prov)


SAMPLES = [
    _source(),
    ChunkSet(source=_source(), chunks=(_chunk(),)),
    ContextPack(query="q", query_analysis=QueryAnalysis(), context_text="[IPC_420_0]\nx", sources=("IPC_420_0",),
                chunks=(_chunk(),), confidence=0.5),
    GenerationPolicy(),
    Answer(query="q", status="success", answer="x [IPC_420_0]", sources=("IPC_420_0",)),
]


@pytest.mark.parametrize("model", SAMPLES, ids=lambda m: m.kind)
def test_json_round_trip_is_lossless(model):
    again = type(model).model_validate_json(model.model_dump_json())
    assert again == model
    assert canonical_json(again) == canonical_json(model)


@pytest.mark.parametrize("model", SAMPLES, ids=lambda m: m.kind)
def test_contracts_are_frozen(model):
    with pytest.raises(pydantic.ValidationError):
        model.kind = "other"  # type: ignore[misc]


@pytest.mark.parametrize("model", SAMPLES, ids=lambda m: m.kind)
def test_unknown_fields_are_rejected(model):
    data = model.model_dump()
    data["surprise"] = 1
    with pytest.raises(pydantic.ValidationError):
        type(model).model_validate(data)


def test_every_stored_kind_is_versioned_and_closed():
    assert len(KINDS) >= 15
    for kind, cls in KINDS.items():
        assert kind.rsplit(".", 1)[-1].startswith("v"), kind
        assert cls.model_config.get("frozen") is True and cls.model_config.get("extra") == "forbid", kind


def test_collections_are_tuples_not_lists():
    for cls in KINDS.values():
        for name, field in cls.model_fields.items():
            assert "list[" not in str(field.annotation), f"{cls.__name__}.{name} is a list"


def test_wrong_kind_is_rejected():
    data = _source().model_dump()
    data["kind"] = "source_document.v2"
    with pytest.raises(pydantic.ValidationError):
        SourceDocument.model_validate(data)


def test_semantic_ids_are_restricted_to_a_safe_alphabet():
    with pytest.raises(pydantic.ValidationError):
        _chunk(sid="IPC 420]")
    assert _chunk(sid="policy_a.pdf#section-3").semantic_id == "policy_a.pdf#section-3"


def test_content_id_is_independent_of_key_order():
    assert content_sha256({"a": 1, "b": [1, 2]}) == content_sha256({"b": [1, 2], "a": 1})
    assert content_sha256({"a": 1}) != content_sha256({"a": 2})


def test_content_ids_are_pinned():
    # Pins the canonical form: if this changes, every stored artifact address changes with it.
    assert canonical_json({"b": "é", "a": [1, 2.5, None]}) == '{"a":[1,2.5,null],"b":"é"}'.encode()
    assert content_sha256(_source()) == "ddb043018926ec02d7c151d0ae475fd75564de6baf728b3ef14c9266c4e77d37"


def test_public_names_are_exported():
    for name in ("ArtifactStore", "ContextPack", "Answer", "GenerationPolicy", "IngestError"):
        assert hasattr(contracts, name)
    assert issubclass(Answer, Contract)


def _contract_classes_with_a_kind() -> set[type[Contract]]:
    import importlib
    import pkgutil

    found = set()
    for info in pkgutil.iter_modules(contracts.__path__):
        module = importlib.import_module(f"contracts.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Contract) and "kind" in obj.model_fields \
                    and isinstance(obj.model_fields["kind"].default, str):  # not ArtifactRef/Header's free `kind`
                found.add(obj)
    return found


def test_the_union_of_stored_kinds_lists_every_contract_with_a_kind():
    # The store reads through one hand-written union: a new contract must be added there, or it cannot be read.
    missing = {c.__name__ for c in _contract_classes_with_a_kind()} - {c.__name__ for c in KINDS.values()}
    assert not missing, f"add {sorted(missing)} to contracts.store._STORED_TYPES"


def test_retired_kinds_are_older_versions_of_a_current_kind():
    for old, successor in RETIRED_KINDS.items():
        new = successor.model_fields["kind"].default
        assert old not in KINDS and KINDS[new] is successor
        assert old.rsplit(".v", 1)[0] == new.rsplit(".v", 1)[0]
        assert int(old.rsplit(".v", 1)[1]) < int(new.rsplit(".v", 1)[1])


def test_answer_with_related_is_a_bumped_kind():
    # Answer.related was added inside answer.v1 (answerability inside v2); a field added to a stored kind bumps it.
    assert "related" in Answer.model_fields and Answer.model_fields["kind"].default == "answer.v4"
    assert RETIRED_KINDS["answer.v1"] is Answer
