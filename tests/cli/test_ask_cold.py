"""`citebound ask` on the cold path: a new question in a fresh process imports neither Prefect nor torch, a repeated
one loads no model at all, and answering as a Prefect flow run (`--flow-run`) leaves the same answer, artifacts and
run record as answering without one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "samples" / "corpus"
QUESTION = "What is wrongful gain?"
# Heavy libraries no `ask` needs (Prefect: no flow run; torch & co: the encoder is ONNX; pandas: nothing uses it).
NEVER = ("prefect", "torch", "sentence_transformers", "transformers", "pandas", "httpx")
# What a repeated question needs none of: its every stage is a cache hit, so no model, word list or index is
# loaded. (The extractive LLM's module is imported: its identity is part of the generate stage's key.)
NOT_WHEN_CACHED = ("onnxruntime", "tokenizers", "faiss", "bm25s", "wordfreq", "stages.retrieval.retrieve",
                   "stages.index.search_index")


@pytest.fixture(scope="module")
def store(tmp_path_factory, prefect_harness) -> Path:
    """The demo's text PDF and textbook chapter, ingested with the real (ONNX) MiniLM."""
    from flows.ingest_flow import ingest_flow

    root = tmp_path_factory.mktemp("cold") / "store"
    for path, code in ((CORPUS / "model_penal_code.pdf", "IPC"), (CORPUS / "ncert_chapter.md", "NCERT")):
        report = ingest_flow(paths=[str(path)], doc_code=code, store=str(root), ocr=False)
        assert all(f.status != "error" for f in report.files)
    return root


def _ask_in_a_fresh_process(store: Path, question: str) -> tuple[dict, set[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CITEBOUND_PREFECT": "ephemeral"}
    env.pop("PREFECT_API_URL", None)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "cli", "--store", str(store), "ask", question,
                           "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return json.loads(proc.stdout.strip().splitlines()[-1]), imported


def test_a_new_question_needs_no_prefect_nor_torch_and_a_repeated_one_no_model(store):
    first, imported = _ask_in_a_fresh_process(store, QUESTION)
    assert first["status"] == "success" and first["citations"], first
    assert not set(NEVER) & imported, sorted(set(NEVER) & imported)
    assert {"onnxruntime", "faiss"} <= imported, "the new question was encoded and searched"

    again, imported = _ask_in_a_fresh_process(store, QUESTION)
    assert not (set(NEVER) | set(NOT_WHEN_CACHED)) & imported, sorted((set(NEVER) | set(NOT_WHEN_CACHED)) & imported)
    assert {**again, "run_id": None} == {**first, "run_id": None} and again["run_id"] != first["run_id"]
    from contracts import ArtifactStore

    record = ArtifactStore(store).get_run(again["run_id"])
    assert [(s.stage, s.cached) for s in record.steps] == [
        ("request", False), ("retrieve", True), ("context", True), ("answerability", True), ("precheck", True),
        ("generate", True),
        ("validate", True)]


def _objects(root: Path) -> dict[str, dict]:
    """Every stored artifact by address, its header without the time it was written."""
    out = {}
    for path in sorted((root / "objects").rglob("*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))
        body["header"].pop("created_at", None)
        out[str(path.relative_to(root))] = body
    return out


def _comparable(record) -> dict:  # noqa: ANN001 - a RunRecord
    return {"flow": record.flow, "status": record.status, "question": record.question,
            "parameters": record.parameters, "outputs": record.outputs,
            "steps": [s.model_dump(exclude={"seconds"}) for s in record.steps]}


def test_a_flow_run_and_a_plain_run_leave_the_same_answer_artifacts_and_run_record(store, tmp_path, monkeypatch,
                                                                                 capsys):
    from cli.main import main
    from contracts import ArtifactStore

    monkeypatch.setenv("CITEBOUND_PREFECT", "ephemeral")  # the session's Prefect test server runs the flow
    plain, orchestrated = tmp_path / "plain", tmp_path / "flow-run"
    shutil.copytree(store, plain)
    shutil.copytree(store, orchestrated)
    before = _objects(plain)
    question = "What does wrongful loss mean?"
    answers = {}
    for root, extra in ((plain, []), (orchestrated, ["--flow-run"])):
        main(["--store", str(root), "ask", question, "--json", *extra])
        answers[root] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    a, b = answers[plain], answers[orchestrated]
    assert a["status"] == "success" and {**a, "run_id": None} == {**b, "run_id": None}
    new_a = {k: v for k, v in _objects(plain).items() if k not in before}
    new_b = {k: v for k, v in _objects(orchestrated).items() if k not in before}
    assert new_a and new_a == new_b, "the same artifacts at the same addresses"
    record_a = ArtifactStore(plain).get_run(a["run_id"])
    record_b = ArtifactStore(orchestrated).get_run(b["run_id"])
    assert _comparable(record_a) == _comparable(record_b)
    assert not any(s.cached for s in record_a.steps[1:]), "a new question: every stage computed"
