"""The HTTP API against a real uvicorn server on 127.0.0.1, keyless local mode: the routes, their JSON,
per-request LLM settings, errors as JSON bodies. Tenant isolation with keys is in test_api_tenants.py."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from contracts import Answer, RetrievalResult
from contracts.store import kind_of
from tests.api.conftest import ingest_fixtures, start_api
from tests.llm_server import FakeOpenAIServer

pytestmark = [pytest.mark.integration]

CITING_REPLY = ("Whoever cheats and thereby dishonestly induces the person deceived to deliver any property "
                "shall be punished with imprisonment of either description for a term which may extend to "
                "seven years [IPC_420_0].")


@pytest.fixture(scope="module")
def api(tmp_path_factory, prefect_harness, module_backends):
    base = tmp_path_factory.mktemp("api-open")
    ingest_fixtures(base / "store", base / "src")
    yield from start_api(base / "store")


def test_health_and_openapi(api):
    with api.client() as c:
        from api.client import store_id

        assert c.get("/health").json() == {"ok": True, "version": "1", "store_id": store_id(api.store_root)}
        paths = c.get("/openapi.json").json()["paths"]
        assert {"/rag/query", "/retrieval", "/sources/{semantic_id}", "/documents", "/documents/{doc}"} <= set(paths)
        assert c.get("/docs").status_code == 200


def test_answer_is_the_same_json_as_the_answer_flow(api):
    from flows.answer_flow import answer_flow

    q = "What is the punishment for cheating under section 420?"
    with api.client() as c:
        r = c.post("/rag/query", json={"query": q, "project_id": "default", "k": 5, "mode": "answer"})
    assert r.status_code == 200, r.text
    got = Answer.model_validate_json(r.text)
    direct = answer_flow(question=q, store=str(api.store_root), embedder="hash", top_k=5)
    assert got.status == "success" and any(c.source_id.startswith("IPC_420_") for c in got.citations)
    assert got.model_copy(update={"run_id": None}) == direct.model_copy(update={"run_id": None})
    assert got.run_id and got.run_id != direct.run_id


def test_refusal_is_http_200_with_status_and_reason_code(api):
    with api.client() as c:
        r = c.post("/rag/query", json={"query": "What is the boiling point of nitrogen on Mars?", "project_id": "default"})
    assert r.status_code == 200
    body = r.json()
    assert body["status"] != "success" and body["reason_code"]
    assert body["answer"] == "I cannot answer based on the provided documents."


def test_retrieval_only_returns_the_retrieval_result(api):
    with api.client() as c:
        r = c.post("/rag/query", json={"query": "punishment for theft", "k": 3, "mode": "retrieval_only"})
    assert r.status_code == 200
    result = RetrievalResult.model_validate_json(r.text)
    assert result.kind == kind_of(RetrievalResult) and 0 < len(result.results) <= 3
    assert result.results[0].source_id.startswith("IPC_379")


def test_per_request_settings_apply_to_that_request_only(api):
    with api.client() as c:
        strict = c.post("/rag/query", json={"query": "What is the punishment for cheating under section 420?",
                                            "settings": {"min_confidence": 1.0}}).json()
        normal = c.post("/rag/query", json={"query": "What is the punishment for cheating under section 420?"}).json()
    assert strict["status"] != "success" and strict["reason_code"]
    assert normal["status"] == "success"


def test_two_clients_with_different_llms_on_one_store_both_get_answers(api):
    q = "What is the punishment for cheating under section 420?"
    with FakeOpenAIServer(reply=CITING_REPLY) as llm_server:
        openai_body = {"query": q, "llm": {"backend": "openai", "model": "local-test", "base_url": llm_server.base_url}}
        extractive_body = {"query": q, "llm": {"backend": "extractive"}}

        def ask(body):  # noqa: ANN001, ANN202
            with api.client() as c:
                return c.post("/rag/query", json=body)

        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(ask, b) for b in (openai_body, extractive_body, openai_body, extractive_body)]
            replies = [f.result() for f in futures]
        # The store caches the draft per (pack, llm spec, policy): the second identical openai request may reuse it.
        assert 1 <= len(llm_server.requests) <= 2
        assert all(r["model"] == "local-test" for r in llm_server.requests)
        # The process's OPENAI_API_KEY never goes to a server the caller named.
        assert all(h.get("authorization") in (None, "Bearer not-needed") for h in llm_server.headers)
    answers = [Answer.model_validate_json(r.text) for r in replies]
    assert all(r.status_code == 200 for r in replies)
    assert all(a.status == "success" for a in answers), [a.refusal_reason for a in answers]
    assert [a.backend for a in answers][0] != [a.backend for a in answers][1]
    assert "openai" in (answers[0].backend or "") and "extractive" in (answers[1].backend or "")


def test_a_non_loopback_llm_server_is_refused(api):
    with api.client() as c:
        r = c.post("/rag/query", json={"query": "theft", "llm": {"backend": "openai", "base_url": "http://169.254.169.254/v1"}})
    assert r.status_code == 422 and r.json()["error"] == "invalid_settings"


@pytest.mark.parametrize("body, error", [
    ({"query": ""}, "invalid_request"),
    ({"query": "theft", "mode": "stream"}, "invalid_request"),
    ({"query": "theft", "k": 0}, "invalid_request"),
    ({"query": "theft", "settings": {"no_such_knob": 1}}, "invalid_settings"),
    ({"query": "theft", "settings": {"top_k": -3}}, "invalid_settings"),
    ({"query": "theft", "extra": 1}, "invalid_request"),
])
def test_bad_requests_get_4xx_with_a_json_body(api, body, error):
    with api.client() as c:
        r = c.post("/rag/query", json=body)
    assert 400 <= r.status_code < 500 and r.json()["error"] == error, r.text


def test_oversized_and_malformed_bodies_are_json_errors(api):
    with api.client() as c:
        big = c.post("/rag/query", content=json.dumps({"query": "x" * 100_000}),
                     headers={"content-type": "application/json"})
        assert big.status_code == 413 and big.json()["error"] == "request_too_large"
        bad = c.post("/rag/query", content=b"{not json", headers={"content-type": "application/json"})
        assert bad.status_code == 422 and bad.json()["error"] == "invalid_request"
        missing = c.get("/no/such/route")
        assert missing.status_code == 404 and "error" in missing.json()


def test_dify_external_knowledge_retrieval(api):
    body = {"knowledge_id": "default", "query": "punishment for theft",
            "retrieval_setting": {"top_k": 2, "score_threshold": 0.0}, "metadata_condition": {"conditions": []}}
    with api.client() as c:
        records = c.post("/retrieval", json=body).json()["records"]
        assert 0 < len(records) <= 2
        first = records[0]
        assert set(first) == {"content", "score", "title", "metadata"}
        assert first["title"] == "penal_code.txt" and "theft" in first["content"].lower()
        assert isinstance(first["metadata"], dict) and first["metadata"]["source_id"].startswith("IPC_379")
        assert 0.0 <= first["score"] <= 1.0
        none = c.post("/retrieval", json={**body, "retrieval_setting": {"top_k": 2, "score_threshold": 1.0}}).json()
        assert all(r["score"] >= 1.0 for r in none["records"])
        other = c.post("/retrieval", json={**body, "knowledge_id": "no-such-project"}).json()
        assert other == {"records": []}


def test_sources_show_the_cited_chunk_with_provenance(api):
    with api.client() as c:
        answer = c.post("/rag/query", json={"query": "What is the punishment for cheating under section 420?"}).json()
        cited = answer["citations"][0]["source_id"]
        src = c.get(f"/sources/{cited}")
        assert src.status_code == 200
        chunk = src.json()["chunk"]
        assert chunk["semantic_id"] == cited and "seven years" in chunk["text"]
        assert chunk["provenance"]["filename"] == "penal_code.txt" and chunk["provenance"]["page"] >= 1
        missing = c.get("/sources/IPC_999_0")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"


def test_upload_list_query_and_delete_a_document(api):
    text = ("SAMPLE KITE ACT (test fixture)\n\n5. Flying kites.—Whoever flies a kite over a public road shall be "
            "punished with fine which may extend to fifty rupees.\n")
    with api.client() as c:
        up = c.post("/documents", files={"files": ("kite act.txt", text.encode(), "text/plain")},
                    data={"project_id": "kites", "doc_code": "KiteAct"})
        assert up.status_code == 200, up.text
        report = up.json()[0]
        assert report["status"] == "ingested" and report["n_chunks"] >= 1 and report["filename"] == "kite_act.txt"
        docs = c.get("/documents").json()["documents"]
        assert any(d["doc_code"] == "KiteAct" and d["project_id"] == "kites" for d in docs)
        hits = c.post("/rag/query", json={"query": "flying a kite over a road", "project_id": "kites",
                                          "mode": "retrieval_only"}).json()["results"]
        assert hits and hits[0]["source_id"].startswith("KiteAct_")
        gone = c.delete("/documents/KiteAct")
        assert gone.status_code == 200 and gone.json()["removed"] == [report["doc_key"]]
        assert not any(d["doc_code"] == "KiteAct" for d in c.get("/documents").json()["documents"])
        again = c.delete("/documents/KiteAct")
        assert again.status_code == 404 and again.json()["error"] == "not_found"
        after = c.post("/rag/query", json={"query": "flying a kite over a road", "project_id": "kites",
                                           "mode": "retrieval_only"}).json()["results"]
        assert after == []


def test_uploading_a_text_already_stored_is_reported_as_a_duplicate_and_not_kept(api):
    from tests.fixtures.statutes import PENAL_CODE

    with api.client() as c:
        before = c.get("/documents").json()["documents"]
        up = c.post("/documents", files={"files": ("penal code copy.txt", PENAL_CODE.replace("\n", "\r\n").encode(),
                                                   "text/plain")})
        assert up.status_code == 200, up.text
        report = up.json()[0]
        assert (report["status"], report["reason"]) == ("duplicate", "duplicate_text"), report
        assert "same text as penal_code.txt" in report["message"]
        assert c.get("/documents").json()["documents"] == before
    assert not (api.store_root / "uploads").exists() or not any(
        "penal_code_copy" in p.name for p in (api.store_root / "uploads").rglob("*")), "the upload's copy is removed"
