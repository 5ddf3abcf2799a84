"""The whole chain on the real parts, through the CLI: PyMuPDF, Tesseract, all-MiniLM-L6-v2, FAISS, bm25s,
the extractive answerer and the validator, on the bundled sample corpus (a text PDF and an image-only PDF)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CORPUS = Path(__file__).resolve().parents[2] / "samples" / "corpus"


@pytest.fixture(scope="module")
def real_store(tmp_path_factory, prefect_harness):
    root = tmp_path_factory.mktemp("real") / "store"
    assert main(["--store", str(root), "ingest", str(CORPUS / "model_penal_code.pdf"), "--doc-code", "IPC"]) == 0
    assert main(["--store", str(root), "ingest", str(CORPUS / "wages_act_scanned.pdf"), "--doc-code", "WagesAct"]) == 0
    return root


def _run_json(capsys, argv) -> tuple[int, list[dict]]:
    capsys.readouterr()
    code = main(argv)
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines() if line.strip().startswith("{")]


def test_section_420_punishment_is_answered_with_file_and_page(real_store, capsys):
    code, [answer] = _run_json(capsys, ["--store", str(real_store), "ask",
                                        "What is the punishment for cheating under section 420?", "--json"])
    assert code == 0, answer
    assert answer["status"] == "success"
    cites = [c for c in answer["citations"] if c["source_id"].startswith("IPC_420_")]
    assert cites, answer["citations"]
    assert cites[0]["filename"] == "model_penal_code.pdf" and cites[0]["page"] >= 1
    assert answer["run_id"]
    assert any(s["cited_ids"] for s in answer["sentences"])


def test_plain_output_shows_sources_other_retrieved_provisions_and_confidence(real_store, capsys):
    code, [answer] = _run_json(capsys, ["--store", str(real_store), "ask",
                                        "What is the punishment for cheating under section 420?", "--json"])
    assert code == 0 and answer["related"], answer
    cited = {c["source_id"] for c in answer["citations"]}
    assert not cited & {c["source_id"] for c in answer["related"]}
    assert main(["--store", str(real_store), "ask", "What is the punishment for cheating under section 420?"]) == 0
    out = capsys.readouterr().out
    sources, also = out.index("Sources:"), out.index("Also retrieved, not used in the answer")
    assert sources < also
    for c in answer["related"]:
        assert f"[{c['source_id']}]" in out[also:]
    assert f"retrieval confidence {answer['confidence']:.2f}" in out


def test_scanned_pdf_is_answerable_through_ocr(real_store, capsys):
    code, [answer] = _run_json(capsys, ["--store", str(real_store), "ask", "Who is an employer under the wages act?", "--json"])
    assert code == 0, answer
    assert any(c["source_id"].startswith("WagesAct_2") for c in answer["citations"]), answer["citations"]
    assert "employ" in answer["answer"].lower()


def test_out_of_scope_question_is_refused_exactly(real_store, capsys):
    code, [answer] = _run_json(capsys, ["--store", str(real_store), "ask", "What is the capital of Australia?", "--json"])
    assert code == 1
    assert answer["answer"] == "I cannot answer based on the provided documents."
    assert answer["status"] in ("insufficient_context", "low_confidence")


def test_retrieve_json_carries_provenance_and_validate_judges_against_it(real_store, capsys, tmp_path):
    code, [result] = _run_json(capsys, ["--store", str(real_store), "retrieve",
                                        "punishment for cheating section 420", "--json"])
    assert code == 0
    top = result["results"][0]
    meta = top["metadata"]
    assert {"filename", "page", "page_end", "section_id", "doc_hash", "chunk_id", "origin"} <= set(meta)
    assert top["source_id"].startswith("IPC_420_")
    retrieved = tmp_path / "retrieved.json"
    retrieved.write_text(json.dumps(result))

    def validate(text: str) -> int:
        f = tmp_path / "answer.txt"
        f.write_text(text)
        return main(["validate", "--answer", str(f), "--chunks", str(retrieved)])

    sentence = next(s for s in top["content_snippet"].replace("\n", " ").split(". ") if "punished" in s)
    assert validate(f"{sentence.strip().rstrip('.')}. [{top['source_id']}]") == 0
    assert validate("I cannot answer based on the provided documents.") == 0
    assert validate(f"{sentence.strip().rstrip('.')}. [IPC_999_0]") == 1
    assert validate(f"{sentence.strip().rstrip('.')}.") == 1


def test_ocr_pages_are_recorded(real_store, capsys):
    code, docs = _run_json(capsys, ["--store", str(real_store), "docs", "--json"])
    entries = {e["doc_code"]: e for e in docs[0]["entries"]}
    assert entries["WagesAct"]["n_ocr_pages"] == entries["WagesAct"]["n_pages"] >= 1
    assert entries["IPC"]["n_ocr_pages"] == 0


def test_questions_file_gives_one_json_line_per_question(real_store, capsys, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("What is the punishment for cheating under section 420?\n\n# a comment\n"
                         "What is the capital of Australia?\n", encoding="utf-8")
    code, answers = _run_json(capsys, ["--store", str(real_store), "ask", "--questions", str(questions), "--json"])
    assert code == 1  # one of the two is refused
    assert [a["status"] == "success" for a in answers] == [True, False]
    code, results = _run_json(capsys, ["--store", str(real_store), "retrieve", "--questions", str(questions), "--json"])
    assert code == 0 and len(results) == 2
    assert results[0]["results"][0]["source_id"].startswith("IPC_420_")


def test_runs_show_and_replay_through_the_cli(real_store, capsys):
    code, [answer] = _run_json(capsys, ["--store", str(real_store), "ask", "What is the punishment for theft?", "--json"])
    assert code == 0
    code, runs = _run_json(capsys, ["--store", str(real_store), "runs", "--json"])
    run = next(r for r in runs if r["run_id"] == answer["run_id"])
    assert run["flow"] == "answer" and run["status"] == "completed" and run["question"] == answer["query"]
    answer_ref = next(o for o in run["outputs"] if o["kind"] == "answer.v4")
    capsys.readouterr()
    assert main(["--store", str(real_store), "show", f"answer.v4:{answer_ref['sha256'][:12]}"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["header"]["stage"] == "validate" and shown["payload"]["answer"] == answer["answer"]
    code, [replayed] = _run_json(capsys, ["--store", str(real_store), "replay", answer["run_id"], "--from", "retrieve", "--json"])
    assert code == 0
    assert replayed["run"]["replay_of"] == answer["run_id"]
    assert replayed["run"]["outputs"] == run["outputs"]  # nothing changed: the same artifact, byte for byte
    assert replayed["answer"]["answer"] == answer["answer"]


def test_ask_takes_per_question_settings_and_rejects_unknown_ones(real_store, capsys):
    question = "What is the punishment for cheating under section 420?"
    code, [strict] = _run_json(capsys, ["--store", str(real_store), "ask", question, "--json",
                                        "--set", "min_confidence=0.999"])
    # A section reference gets confidence 0.95: below this threshold the same question is refused.
    assert code == 1 and strict["status"] == "low_confidence"
    code, [one] = _run_json(capsys, ["--store", str(real_store), "ask", question, "--json", "--set", "top_k=1"])
    assert code == 0 and {c["source_id"] for c in one["citations"]} <= {"IPC_420_0"}
    capsys.readouterr()
    assert main(["--store", str(real_store), "ask", question, "--set", "no_such_setting=1"]) == 2
    assert "no_such_setting" in capsys.readouterr().err


def test_project_settings_apply_to_every_answer_until_unset(real_store, capsys):
    question = "What is the punishment for cheating under section 420?"
    store = ["--store", str(real_store)]
    capsys.readouterr()
    # Another project's settings leave this one alone.
    assert main([*store, "settings", "--project", "other", "--set", "min_confidence=0.999"]) == 0
    code, [plain] = _run_json(capsys, [*store, "ask", question, "--json"])
    assert code == 0 and plain["status"] == "success"
    assert main([*store, "settings", "--set", "min_confidence=0.999", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overrides"] == {"min_confidence": "0.999"}
    try:
        code, [strict] = _run_json(capsys, [*store, "ask", question, "--json"])
        assert code == 1 and strict["status"] == "low_confidence"
        # A question's own --set wins over the project's.
        code, [own] = _run_json(capsys, [*store, "ask", question, "--json", "--set", "min_confidence=0.3"])
        assert code == 0 and own["status"] == "success"
        assert main([*store, "settings", "--set", "bogus=1"]) == 2  # validated before anything is stored
    finally:
        capsys.readouterr()
        assert main([*store, "settings", "--unset", "min_confidence", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overrides"] == {}
    code, [again] = _run_json(capsys, [*store, "ask", question, "--json"])
    assert code == 0 and again["status"] == "success"


def test_retrieve_applies_the_projects_standing_retrieval_settings(real_store, capsys):
    store = ["--store", str(real_store)]
    code, [plain] = _run_json(capsys, [*store, "retrieve", "punishment for theft", "--json"])
    assert code == 0 and len(plain["results"]) == 5
    assert main([*store, "settings", "--set", "top_k=2"]) == 0
    try:
        code, [narrow] = _run_json(capsys, [*store, "retrieve", "punishment for theft", "--json"])
        assert len(narrow["results"]) == 2
        code, [wide] = _run_json(capsys, [*store, "retrieve", "punishment for theft", "--json", "--top-k", "4"])
        assert len(wide["results"]) == 4  # the command line still wins
        # ask: the pack holds at most top_k sources, the standing one unless the command line says otherwise.
        code, [few] = _run_json(capsys, [*store, "ask", "What is the punishment for theft?", "--json"])
        code, [more] = _run_json(capsys, [*store, "ask", "What is the punishment for theft?", "--json",
                                          "--top-k", "4"])
        assert few["status"] == more["status"] == "success"
        assert len(few["sources"]) <= 2 < len(more["sources"]) <= 4
    finally:
        assert main([*store, "settings", "--unset", "top_k"]) == 0


def test_demo_questions_get_the_same_answers_after_reindex_to_a_milvus_server_and_back(real_store, capsys,
                                                                                         milvus_server):
    """``citebound reindex --to http://127.0.0.1:PORT`` (the session's milvus-lite server) moves the index from the
    stored vectors; the demo's three questions get the same answers, citations and sources there, and again
    after ``reindex --to faiss``. Last in the module: the store ends on FAISS, as it began."""
    questions = [q.strip() for q in (CORPUS.parent / "demo_questions.txt").read_text().splitlines() if q.strip()]
    store = ["--store", str(real_store)]

    def answers() -> list[tuple]:
        out = []
        for question in questions:
            code, [answer] = _run_json(capsys, [*store, "ask", question, "--json"])
            out.append((code, answer["status"], answer["answer"], [c["source_id"] for c in answer["citations"]],
                        list(answer["sources"])))
        return out

    on_faiss = answers()
    assert [status for _, status, *_ in on_faiss][:2] == ["success", "success"] and on_faiss[2][0] == 1, on_faiss
    try:
        code, [moved] = _run_json(capsys, [*store, "reindex", "--to", milvus_server, "--json"])
        assert code == 0 and moved["stats"]["backend"] == "milvus" and moved["stats"]["n_chunks"] == moved["n_vectors"]
        assert answers() == on_faiss
    finally:
        code, [back] = _run_json(capsys, [*store, "reindex", "--to", "faiss", "--json"])
        assert code == 0 and back["stats"]["backend"] == "faiss"
    assert answers() == on_faiss
