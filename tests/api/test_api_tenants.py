"""Keys and tenants against a real server: every endpoint reaches only the key's tenant, and a cross-tenant
attempt is answered exactly like a request for something that does not exist (nothing leaks). Also keys
stored hashed, revocation, per-key rate limits, and the `citebound keys` commands. The tenant tests run on both
index backends: FAISS in the store, and a Milvus collection on the session's milvus-lite server."""

from __future__ import annotations

import sqlite3

import pytest

from api.db import Database, default_url
from tests.api.conftest import ingest_fixtures, start_api, start_keyed_api

pytestmark = [pytest.mark.integration]

Q420 = "What is the punishment for cheating under section 420?"


@pytest.fixture(scope="module", params=["faiss", "milvus"])
def tenants(request, tmp_path_factory, prefect_harness, module_backends):
    index_uri = None if request.param == "faiss" else request.getfixturevalue("milvus_server")
    base = tmp_path_factory.mktemp("api-tenants")
    root = base / "store"
    ingest_fixtures(root, base / "acme-src", tenant="acme", index_uri=index_uri)  # acme holds IPC + WagesAct
    for api, (acme, globex), db in start_keyed_api(root, "acme", "globex", index_uri=index_uri):
        yield api, acme, globex, db


def _norm(body: dict, name: str) -> dict:
    return {k: (v.replace(name, "<name>") if isinstance(v, str) else v) for k, v in body.items()}


def test_keys_are_stored_hashed(tenants):
    api, acme, _, _ = tenants
    con = sqlite3.connect(api.store_root / "citebound.db")
    dumped = "\n".join(con.iterdump())
    con.close()
    assert acme not in dumped and acme.split("_")[-1] not in dumped


def test_no_key_and_a_wrong_key_are_refused_with_json(tenants):
    api, acme, _, _ = tenants
    with api.client() as c:
        r = c.post("/rag/query", json={"query": Q420})
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
    with api.client(acme[:-2] + "xx") as c:
        r = c.post("/rag/query", json={"query": Q420})
        assert r.status_code == 403 and r.json()["error"] == "forbidden"
    with api.client() as c:
        # Dify's error body on its route.
        r = c.post("/retrieval", json={"knowledge_id": "default", "query": "theft", "retrieval_setting": {"top_k": 1}})
        assert r.status_code == 401 and r.json()["error_code"] == 1001
    with api.client("cb_nope_nope") as c:
        r = c.post("/retrieval", json={"knowledge_id": "default", "query": "theft", "retrieval_setting": {"top_k": 1}})
        assert r.status_code == 403 and r.json()["error_code"] == 1002
    with api.client() as c:
        assert c.get("/health").status_code == 200  # liveness needs no key


def test_query_reaches_only_the_keys_tenant(tenants):
    api, acme, globex, _ = tenants
    with api.client(acme) as c:
        own = c.post("/rag/query", json={"query": Q420}).json()
        assert own["status"] == "success"
        hits = c.post("/rag/query", json={"query": Q420, "mode": "retrieval_only"}).json()["results"]
        assert hits and all(h["metadata"]["tenant_id"] == "acme" for h in hits)
    with api.client(globex) as c:
        r = c.post("/rag/query", json={"query": Q420})
        assert r.status_code == 200 and r.json()["status"] != "success"  # globex has no documents
        assert "seven years" not in r.text
        assert c.post("/rag/query", json={"query": Q420, "mode": "retrieval_only"}).json()["results"] == []
        for tenant in ("acme", "no-such-tenant"):
            r = c.post("/rag/query", json={"query": Q420, "tenant_id": tenant})
            assert r.status_code == 403 and r.json() == {"error": "forbidden",
                                                         "detail": "this key does not reach that tenant"}
        dify = c.post("/retrieval", json={"knowledge_id": "default", "query": Q420,
                                          "retrieval_setting": {"top_k": 5, "score_threshold": 0.0}})
        assert dify.status_code == 200 and dify.json() == {"records": []}


def test_sources_of_another_tenant_look_like_missing_ones(tenants):
    api, acme, globex, _ = tenants
    with api.client(acme) as c:
        cited = c.post("/rag/query", json={"query": Q420}).json()["citations"][0]["source_id"]
        assert c.get(f"/sources/{cited}").status_code == 200
    with api.client(globex) as c:
        for suffix in ("", "/highlights", "/page.png", "/page.png?page=1"):
            theirs = c.get(f"/sources/{cited}{suffix}")
            missing = c.get(f"/sources/IPC_999_0{suffix}")
            assert theirs.status_code == missing.status_code == 404, suffix
            assert _norm(theirs.json(), cited) == _norm(missing.json(), "IPC_999_0")


def test_documents_of_another_tenant_are_invisible_and_undeletable(tenants):
    api, acme, globex, _ = tenants
    with api.client(acme) as c:
        docs = c.get("/documents").json()["documents"]
        assert {d["doc_code"] for d in docs} == {"IPC", "WagesAct"}
        doc_key = docs[0]["doc_key"]
    with api.client(globex) as c:
        assert c.get("/documents").json() == {"documents": []}
        for name in ("IPC", doc_key, "penal_code.txt"):
            theirs = c.delete(f"/documents/{name}")
            missing = c.delete("/documents/NoSuchDoc")
            assert theirs.status_code == missing.status_code == 404
            assert _norm(theirs.json(), name) == _norm(missing.json(), "NoSuchDoc")
    with api.client(acme) as c:
        assert {d["doc_code"] for d in c.get("/documents").json()["documents"]} == {"IPC", "WagesAct"}


def test_uploads_land_in_the_callers_tenant_and_registry(tenants):
    api, acme, globex, db = tenants
    text = "SAMPLE DRUM ACT (test fixture)\n\n4. Drums at night.—Whoever beats a drum after midnight shall be punished with fine.\n"
    with api.client(globex) as c:
        up = c.post("/documents", files={"files": ("drum.txt", text.encode(), "text/plain")}, data={"doc_code": "DrumAct"})
        assert up.status_code == 200 and up.json()[0]["status"] == "ingested"
        run_id = up.json()[0]["run_id"]
        assert [d["doc_code"] for d in c.get("/documents").json()["documents"]] == ["DrumAct"]
        assert c.get(f"/runs/{run_id}").json()["run_id"] == run_id
    with api.client(acme) as c:
        assert "DrumAct" not in {d["doc_code"] for d in c.get("/documents").json()["documents"]}
        hits = c.post("/rag/query", json={"query": "beating a drum after midnight", "mode": "retrieval_only"}).json()
        assert all(not h["source_id"].startswith("DrumAct") for h in hits["results"])
        theirs = c.get(f"/runs/{run_id}")
        missing = c.get("/runs/0000nosuchrun")
        assert theirs.status_code == missing.status_code == 404
    with db.sessions() as s:
        from api.db import DocumentRow, RunRow

        row = s.get(DocumentRow, up.json()[0]["doc_key"])
        assert row.tenant_id == "globex" and row.doc_code == "DrumAct"
        assert s.get(RunRow, run_id).tenant_id == "globex"


def test_answer_runs_are_indexed_and_private(tenants):
    api, acme, globex, db = tenants
    with api.client(acme) as c:
        run_id = c.post("/rag/query", json={"query": Q420}).json()["run_id"]
        record = c.get(f"/runs/{run_id}")
        assert record.status_code == 200 and record.json()["question"] == Q420
    assert db.run_tenant(run_id) == "acme"
    with api.client(globex) as c:
        assert c.get(f"/runs/{run_id}").status_code == 404
        assert c.get(f"/runs/{run_id[:8]}").status_code == 404  # no prefix probing either


def test_a_revoked_key_stops_working(tenants):
    api, _, _, db = tenants
    key_id, key = db.add_key("acme")
    with api.client(key) as c:
        assert c.get("/documents").status_code == 200
        db.revoke_key(key_id)
        r = c.get("/documents")
        assert r.status_code == 403 and r.json()["error"] == "forbidden"


def test_rate_limit_per_key(tmp_path, prefect_harness, module_backends):
    db = Database(default_url(tmp_path))
    db.migrate()
    slow, other = db.add_key("t1")[1], db.add_key("t1")[1]
    for api in start_api(tmp_path, db=db, rate_per_minute=3):
        with api.client(slow) as c:
            codes = [c.get("/documents").status_code for _ in range(5)]
            limited = c.get("/documents")
        with api.client(other) as c:
            assert c.get("/documents").status_code == 200  # the limit is per key
    db.close()
    assert codes[:3] == [200, 200, 200] and 429 in codes[3:]
    assert limited.status_code == 429 and limited.json()["error"] == "rate_limited"
