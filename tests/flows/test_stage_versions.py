"""Stage versions derived from code: a change in a module a stage reaches gives it a new version (so it
recomputes); a stage that does not reach the module keeps its version (so it stays cached)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from contracts import AnswerRequest, GenerationPolicy
from flows.stage_versions import (
    PROJECT_ROOT,
    STAGE_MODULES,
    clear_caches,
    describe_stage,
    module_closure,
    stage_version,
)
from flows.tasks import run_stage

pytestmark = pytest.mark.unit


@pytest.fixture
def project_copy(tmp_path) -> Path:
    """contracts/ and stages/ copied into a temporary project root (the code a stage version reads)."""
    root = tmp_path / "project"
    for package in ("contracts", "stages"):
        shutil.copytree(PROJECT_ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _versions(root: Path) -> dict[str, str]:
    return {stage: stage_version(stage, root=root).code for stage in STAGE_MODULES}


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    clear_caches()  # versions are read once per process; a new process would read the edited file


def test_stage_names_and_their_modules_are_pinned():
    # Renaming a stage or moving its code is a deliberate act: it changes every cache key of that stage.
    assert STAGE_MODULES == {
        "source": "stages.ingest.extract",
        "extract": "stages.ingest.extract",
        "clean": "stages.ingest.clean",
        "chunk": "stages.ingest.chunk",
        "flag": "stages.ingest.injection",
        "embed": "stages.ingest.embed",
        "index": "stages.index.search_index",
        "request": "contracts.catalog",
        "retrieve": "stages.retrieval.retrieve",
        "context": "stages.retrieval.context",
        "successors": "stages.provisions.successors",
        "answerability": "stages.grounding.answerability",
        "precheck": "stages.grounding.precheck",
        "generate": "stages.generation.generate",
        "validate": "stages.grounding.validate",
        "provisions": "stages.provisions.parse",
        "align_provisions": "stages.provisions.align",
    }
    for module in STAGE_MODULES.values():
        assert PROJECT_ROOT.joinpath(*module.split(".")).with_suffix(".py").is_file(), module


def test_every_stage_the_flows_run_has_a_derived_version():
    used = set()
    for path in (PROJECT_ROOT / "flows").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_stage":
                used.update(k.value.value for k in node.keywords
                            if k.arg == "stage" and isinstance(k.value, ast.Constant))
    assert used and used <= set(STAGE_MODULES), used - set(STAGE_MODULES)


def test_labels_come_from_the_stage_modules():
    from stages.grounding import precheck, validate
    from stages.retrieval import retrieve

    assert stage_version("precheck").label == precheck.STAGE_VERSION  # was recorded as "precheck.v1"
    assert stage_version("validate").label == validate.STAGE_VERSION
    assert stage_version("retrieve").label == retrieve.STAGE_VERSION


def test_closures_follow_imports_transitively():
    assert "stages.text.units" in module_closure("stages.grounding.validate")
    assert "stages.text.units" in module_closure("stages.grounding.precheck")  # through validate as well
    assert "stages.text.units" not in module_closure("stages.retrieval.retrieve")
    assert "stages.text.model_tokens" in module_closure("stages.ingest.chunk")


def test_libraries_a_stage_imports_are_part_of_its_version():
    assert "bm25s" in describe_stage("index")["libraries"]
    # retrieve reaches its index through the port: the backend it runs with brings its own code and library.
    import numpy as np

    from contracts import IndexConfig
    from stages.adapters.milvus_index import MilvusIndex
    from stages.index.faiss_backend import FaissBm25Index

    faiss_backend = FaissBm25Index.build([], np.zeros((0, 4), np.float32), embedding_model="m", model_revision="1",
                                         cfg=IndexConfig())
    milvus_backend = MilvusIndex(None, "c", embedding_model="m", model_revision="1", dim=4, cfg=IndexConfig(),
                                 fingerprint="")
    assert "faiss" not in describe_stage("retrieve")["libraries"]
    on_faiss = describe_stage("retrieve", backends=[faiss_backend])["backends"][0]
    on_milvus = describe_stage("retrieve", backends=[milvus_backend])["backends"][0]
    assert "faiss" in on_faiss["libraries"] and "pymilvus" in on_milvus["libraries"]
    assert "pymupdf" in describe_stage("extract")["libraries"]
    assert "langchain_text_splitters" in describe_stage("chunk")["libraries"]


def test_a_change_in_a_dependency_changes_only_the_stages_that_reach_it(project_copy):
    before = _versions(project_copy)
    assert before == _versions(PROJECT_ROOT)  # the copy is the same code
    _append(project_copy / "stages" / "text" / "units.py", '\n_UNITS.pop("three")\n')
    after = _versions(project_copy)
    changed = {stage for stage in STAGE_MODULES if before[stage] != after[stage]}
    assert changed == {"validate", "precheck"}


def test_comments_docstrings_and_layout_do_not_change_versions(project_copy):
    before = _versions(project_copy)
    path = project_copy / "stages" / "text" / "units.py"
    text = path.read_text(encoding="utf-8")
    text = text.replace('"""Shared text units', '"""Reworded: shared text units', 1)
    path.write_text(text + "\n# a trailing comment\n\n\n", encoding="utf-8")
    clear_caches()
    assert _versions(project_copy) == before


def test_a_changed_contract_changes_the_stages_that_use_it(project_copy):
    before = _versions(project_copy)
    _append(project_copy / "contracts" / "answer.py", "\nEXTRA_CONSTANT = 1\n")
    after = _versions(project_copy)
    assert after["validate"] != before["validate"] and after["context"] != before["context"]
    assert after["chunk"] == before["chunk"] and after["clean"] == before["clean"]


def test_the_adapter_a_stage_runs_with_is_part_of_its_version():
    from tests.fakes import HashEmbedder, ScriptedLLM

    plain = stage_version("generate").code
    scripted = stage_version("generate", backends=(ScriptedLLM(["x"]),)).code
    assert plain != scripted
    assert stage_version("embed", backends=(HashEmbedder(model_revision="1"),)).code != \
        stage_version("embed", backends=(HashEmbedder(model_revision="2"),)).code


def test_a_dependency_change_recomputes_the_dependent_stage_and_not_the_others(store, project_copy):
    src = store.put(AnswerRequest(query="q"), stage="request", stage_version="request.v1")
    calls: list[str] = []

    def run(stage: str, root: Path):
        def compute():
            calls.append(stage)
            return GenerationPolicy()

        return run_stage(store, stage=stage, version=stage_version(stage, root=root), config={}, inputs=(src,),
                         compute=compute)

    assert not run("validate", project_copy).cached and not run("context", project_copy).cached
    assert run("validate", project_copy).cached and run("context", project_copy).cached
    _append(project_copy / "stages" / "text" / "units.py", '\n_UNITS.pop("three")\n')
    assert not run("validate", project_copy).cached  # recomputed under the new code
    assert run("context", project_copy).cached  # context does not reach text_units
    assert calls == ["validate", "context", "validate"]
