"""The same corpus gives the same answers on both index backends, through the CLI on the real parts (PyMuPDF,
Tesseract, all-MiniLM-L6-v2, the extractive answerer): ``citebound ingest`` of the sample corpus laid out as it
was when ``samples/corpus/sources/`` held the texts the PDFs are made from (so each statute came twice), once on
FAISS in the store and once with ``CITEBOUND_INDEX_URI`` at the session's ``milvus-lite server``; then the demo's
questions and one more. Statuses, citations and sources are equal, confidences equal within float noise; the
Penal Code's text copy is reported as a duplicate of its PDF on both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.main import main

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
QUESTIONS = [*(q.strip() for q in (SAMPLES / "demo_questions.txt").read_text().splitlines() if q.strip()),
             "What is the punishment for cheating?"]


def _json(capsys, argv: list[str]) -> tuple[int, dict]:  # noqa: ANN001
    capsys.readouterr()
    code = main(argv)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("{")]
    return code, json.loads(lines[-1])


def test_faiss_and_a_milvus_server_answer_the_sample_corpus_alike(prefect_harness, milvus_server, tmp_path,
                                                                  monkeypatch, capsys):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLES / "corpus", corpus)
    shutil.copytree(SAMPLES / "sources", corpus / "sources")  # the layout the issue was found on
    results = {}
    for backend, uri in (("faiss", None), ("milvus", milvus_server)):
        if uri is None:
            monkeypatch.delenv("CITEBOUND_INDEX_URI", raising=False)
        else:
            monkeypatch.setenv("CITEBOUND_INDEX_URI", uri)
        store = ["--store", str(tmp_path / f"store-{backend}")]
        code, report = _json(capsys, [*store, "ingest", str(corpus), "--json"])
        assert code == 0, report
        files = {Path(f["path"]).name: f for f in report["files"]}
        assert (files["model_penal_code.txt"]["status"], files["model_penal_code.txt"]["duplicate_of"]) == (
            "duplicate", "model_penal_code.pdf"), files
        answers = []
        for question in QUESTIONS:
            _, answer = _json(capsys, [*store, "ask", question, "--json"])
            answers.append(answer)
        results[backend] = (report["n_vectors"], answers)

    n_faiss, on_faiss = results["faiss"]
    n_milvus, on_milvus = results["milvus"]
    assert n_faiss == n_milvus
    for question, a, b in zip(QUESTIONS, on_faiss, on_milvus, strict=True):
        assert (a["status"], a["answer"], [c["source_id"] for c in a["citations"]], list(a["sources"])) == (
            b["status"], b["answer"], [c["source_id"] for c in b["citations"]], list(b["sources"])), question
        assert a["confidence"] == pytest.approx(b["confidence"], abs=1e-5), question
    statuses = [a["status"] for a in on_faiss]
    assert statuses[0] == statuses[1] == statuses[3] == "success" and statuses[2] != "success", statuses
