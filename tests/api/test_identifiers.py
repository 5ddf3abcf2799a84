"""Every identifier a caller sends, with a control character in it (NUL above all), is the caller's error: 422
with ``{error, detail}``, or on Dify's /retrieval a 4xx in Dify's ``{error_code, error_msg}``; never a 500 and
never a refusal that hides it. Against a real uvicorn server over a store with documents, keys on."""

from __future__ import annotations

import pytest

from tests.api.conftest import ingest_fixtures, start_keyed_api

pytestmark = [pytest.mark.integration]

BAD = ("IPC\x00379", "IPC\n379", "IPC\x1b[31m", "IPC\x7f")


@pytest.fixture(scope="module")
def keyed(tmp_path_factory, prefect_harness, module_backends):
    base = tmp_path_factory.mktemp("api-identifiers")
    ingest_fixtures(base / "store", base / "src", tenant="acme")
    for api, keys, _db in start_keyed_api(base / "store", "acme"):
        yield api, keys[0]


def _query(mode: str, field: str):  # noqa: ANN202
    def send(c, bad):  # noqa: ANN001, ANN202
        body = {"query": "What is the punishment for theft?", "mode": mode, field: bad}
        return c.post("/rag/query", json=body)
    return send


def _dify(c, bad):  # noqa: ANN001, ANN202
    return c.post("/retrieval", json={"knowledge_id": bad, "query": "theft", "retrieval_setting": {"top_k": 3}})


def _upload(field: str):  # noqa: ANN202
    def send(c, bad):  # noqa: ANN001, ANN202
        return c.post("/documents", files={"files": ("kite_act.txt", b"5. Kites.-Whoever flies a kite.\n", "text/plain")},
                      data={field: bad})
    return send


def _path(method: str, template: str):  # noqa: ANN202
    def send(c, bad):  # noqa: ANN001, ANN202
        from urllib.parse import quote

        return c.request(method, template.format(quote(bad, safe="")))
    return send


ROUTES = {
    "rag_query.retrieval_only.project_id": _query("retrieval_only", "project_id"),
    "rag_query.answer.project_id": _query("answer", "project_id"),
    "rag_query.retrieval_only.tenant_id": _query("retrieval_only", "tenant_id"),
    "rag_query.answer.tenant_id": _query("answer", "tenant_id"),
    "dify.knowledge_id": _dify,
    "upload.project_id": _upload("project_id"),
    "upload.doc_code": _upload("doc_code"),
    "sources.semantic_id": _path("GET", "/sources/{}"),
    "sources.highlights.semantic_id": _path("GET", "/sources/{}/highlights"),
    "sources.page.semantic_id": _path("GET", "/sources/{}/page.png"),
    "documents.delete.doc": _path("DELETE", "/documents/{}"),
    "runs.run_id": _path("GET", "/runs/{}"),
}


@pytest.mark.parametrize("bad", BAD, ids=["nul", "newline", "escape", "del"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_control_character_in_an_identifier_is_the_callers_error(keyed, route, bad):
    api, key = keyed
    with api.client(key) as c:
        r = ROUTES[route](c, bad)
    if route.startswith("dify."):
        assert r.status_code == 400, r.text
        body = r.json()
        assert set(body) == {"error_code", "error_msg"} and body["error_code"] == 3001
        assert "control characters" in body["error_msg"]
    else:
        assert r.status_code == 422, r.text
        assert r.json()["error"] == "invalid_request" and "control characters" in r.json()["detail"]
    assert str(api.store_root) not in r.text


def test_the_same_identifiers_without_the_control_character_still_work(keyed):
    api, key = keyed
    with api.client(key) as c:
        r = c.post("/rag/query", json={"query": "What is the punishment for theft?", "mode": "retrieval_only",
                                       "project_id": "default", "tenant_id": "acme"})
        assert r.status_code == 200 and r.json()["results"], r.text
        ident = r.json()["results"][0]["source_id"]
        assert c.get(f"/sources/{ident}").status_code == 200
        assert c.post("/retrieval", json={"knowledge_id": "default", "query": "theft",
                                          "retrieval_setting": {"top_k": 3}}).status_code == 200
        assert c.delete("/documents/NoSuchCode").status_code == 404
