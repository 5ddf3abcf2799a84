"""A bad byte, a careless operator and a hostile tenant, against `citebound api` with keys on 127.0.0.1.

One API process serves two tenants over one store (quota: 2 documents and 20,000 bytes each); `citebound
keys`, `ingest`, `fsck`, `repair` and `gc` run beside it as real processes. In file order:

- semantic ids are made within the tenant (acme's upload of the same act gets the ids globex's got, no
  de-duplication suffix), and nothing in acme's results moves when globex deletes and uploads;
- Dify's /retrieval: records by score, best first; ``metadata_condition`` filters; an operator it cannot apply
  and a malformed body are 4xx in Dify's ``{error_code, error_msg}``;
- a rejected upload (a truncated PDF, junk named .pdf) and a refused one (quota: 429 documents, 413 bytes)
  leave the store as it was, byte for byte;
- one word changed in globex's chunk set: acme is still answered, globex is refused by the document's name (no
  server path), no route 500s; `fsck` names the object ``chunk_set.v1:sha`` with that document and tenant;
  `repair` re-derives it and globex is answered again by the same running API;
- `gc` started while `citebound ingest` is OCRing a scan (its source blob written, not yet in the catalog)
  waits for it, removes a planted orphan blob and upload copy, and keeps everything in use: fsck then verifies
  and the new document is answered.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from contracts import IngestReport
from tests.faults.conftest import Cli, image_only_pdf, kill_marked, start_api, wait_for_marked
from tests.fixtures.statutes import PENAL_CODE, WAGES_ACT

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUOTA_DOCUMENTS, QUOTA_BYTES = 2, 20_000
THEFT = "What is the punishment for theft?"
WAGES = "What is the penalty under section 22 for paying less than the minimum wages?"


class Served:
    def __init__(self, cli: Cli, api, keys: dict[str, str], corpus: Path) -> None:  # noqa: ANN001
        self.cli, self.api, self.keys, self.corpus = cli, api, keys, corpus

    def client(self, tenant: str) -> httpx.Client:
        return httpx.Client(base_url=self.api.url, headers={"authorization": f"Bearer {self.keys[tenant]}"},
                            timeout=600)

    def upload(self, tenant: str, name: str, data: bytes, doc_code: str | None = None) -> httpx.Response:
        with self.client(tenant) as c:
            return c.post("/documents", files={"files": (name, data, "application/octet-stream")},
                          data={"doc_code": doc_code} if doc_code else {})

    def ask(self, tenant: str, question: str, **extra: object) -> httpx.Response:
        with self.client(tenant) as c:
            return c.post("/rag/query", json={"query": question, **extra})


def snapshot(root: Path) -> dict[str, int]:
    """Every stored file and its size, but the record of each attempt (its run record and the ingest report it
    names: by design, and no byte of the upload is in them), the key database and the lock files."""
    out = {}
    kept = ("runs/", f"objects/{IngestReport.model_fields['kind'].default}/", "citebound.db", "locks/")
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(kept) and not p.name.endswith(".lock"):
            out[rel] = p.stat().st_size
    return out


@pytest.fixture(scope="module")
def served(tmp_path_factory, prefect_env):
    base = tmp_path_factory.mktemp("store-faults")
    corpus = base / "corpus"
    corpus.mkdir()
    env = {**prefect_env, "CITEBOUND_QUOTA_DOCUMENTS": str(QUOTA_DOCUMENTS), "CITEBOUND_QUOTA_BYTES": str(QUOTA_BYTES)}
    cli = Cli(base / "store", env)
    keys = {}
    for tenant in ("globex", "acme"):
        done = cli.run("keys", "add", "--tenant", tenant, timeout=300)
        assert done.returncode == 0, done.stderr
        keys[tenant] = done.stdout.strip().splitlines()[-1]
    api = start_api(cli, None, auth=True)
    try:
        s = Served(cli, api, keys, corpus)
        for tenant, name, text, code in (("globex", "penal_code.txt", PENAL_CODE, "IPC"),
                                         ("globex", "wages_act.txt", WAGES_ACT, "WagesAct"),
                                         ("acme", "penal_code.txt", PENAL_CODE, "IPC")):
            r = s.upload(tenant, name, text.encode(), code)
            assert r.status_code == 200 and r.json()[0]["status"] == "ingested", r.text
        yield s
    finally:
        api.stop()
        kill_marked(cli.mark)


def _retrieval(s: Served, tenant: str, question: str = THEFT, k: int = 50) -> dict:
    r = s.ask(tenant, question, mode="retrieval_only", k=k)
    assert r.status_code == 200, r.text
    return r.json()


def test_semantic_ids_are_tenant_local_and_nothing_moves_with_another_tenant(served):
    acme, globex = _retrieval(served, "acme"), _retrieval(served, "globex")
    ids = [i["source_id"] for i in acme["results"]]
    assert ids and ids[0].startswith("IPC_379")
    # The same act, uploaded by acme after globex: every chunk gets the id globex's got (k covers both acts), no
    # suffix telling acme that globex has that section.
    assert sorted(ids) == sorted(i["source_id"] for i in globex["results"] if i["source_id"].startswith("IPC_"))
    seen = [acme]
    with served.client("globex") as c:
        assert c.delete("/documents/IPC").status_code == 200
        seen.append(_retrieval(served, "acme"))
        assert c.post("/documents", files={"files": ("penal_code.txt", PENAL_CODE.encode(), "text/plain")},
                      data={"doc_code": "IPC"}).status_code == 200
        seen.append(_retrieval(served, "acme"))
    # Ids, scores, confidences, order and the index address acme sees: the same whatever globex does.
    assert all(r["results"] == acme["results"] and r["index_sha256"] == acme["index_sha256"] for r in seen)


def _dify(s: Served, tenant: str, query: str, condition: dict | None = None, top_k: int = 6) -> httpx.Response:
    body = {"knowledge_id": "default", "query": query, "retrieval_setting": {"top_k": top_k, "score_threshold": 0.0}}
    if condition is not None:
        body["metadata_condition"] = condition
    with s.client(tenant) as c:
        return c.post("/retrieval", json=body)


def test_dify_records_by_score_and_its_filters(served):
    records = _dify(served, "globex", "punishment and penalty for theft or wages").json()["records"]
    scores = [r["score"] for r in records]
    assert len(records) >= 3 and scores == sorted(scores, reverse=True)
    assert {r["metadata"]["doc_code"] for r in records} == {"IPC", "WagesAct"}  # both documents compete
    only = _dify(served, "globex", "punishment and penalty for theft or wages",
                 {"logical_operator": "and",
                  "conditions": [{"name": "doc_code", "comparison_operator": "is", "value": "WagesAct"}]})
    assert only.status_code == 200 and only.json()["records"]
    assert {r["metadata"]["doc_code"] for r in only.json()["records"]} == {"WagesAct"}
    named = _dify(served, "globex", "punishment and penalty for theft or wages",
                  {"conditions": [{"name": "filename", "comparison_operator": "start with", "value": "penal"},
                                  {"name": "section", "comparison_operator": "in", "value": ["379", "378"]}]})
    assert named.status_code == 200 and named.json()["records"]
    assert all(r["title"] == "penal_code.txt" and r["metadata"]["section"] in ("378", "379")
               for r in named.json()["records"])
    bad = _dify(served, "globex", "theft",
                {"conditions": [{"name": "doc_code", "comparison_operator": "before", "value": "x"}]})
    assert bad.status_code == 400 and set(bad.json()) == {"error_code", "error_msg"}
    assert "before" in bad.json()["error_msg"]
    with served.client("globex") as c:
        malformed = c.post("/retrieval", json={"knowledge_id": "default"})
    assert malformed.status_code == 400 and set(malformed.json()) == {"error_code", "error_msg"}


def _truncated_pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "1. Short title. This Act may be called the Truncated Act. " * 20)
    data = doc.tobytes()
    return data[: len(data) // 2]


def test_rejected_and_refused_uploads_leave_nothing(served):
    root = served.cli.store
    before = snapshot(root)
    truncated = served.upload("acme", "truncated.pdf", _truncated_pdf())
    assert truncated.status_code == 200 and truncated.json()[0]["status"] == "error"
    junk = served.upload("acme", "junk.pdf", os.urandom(12_000))
    assert junk.status_code == 200 and junk.json()[0]["status"] == "error"
    # globex holds its 2 documents: a third is 429; acme's 1 document leaves no room for 25 kB: 413.
    third = served.upload("globex", "kite_act.txt", b"5. Flying kites.-Whoever flies a kite shall be fined.\n")
    assert third.status_code == 429 and third.json()["error"] == "document_quota_exceeded"
    big = served.upload("acme", "big_act.txt", b"1. Short title.-The Big Act.\n" + b"x" * 25_000)
    assert big.status_code == 413 and big.json()["error"] == "storage_quota_exceeded"
    assert str(root) not in truncated.text + junk.text + third.text + big.text
    assert snapshot(root) == before  # no upload copy, no blob, no derived artifact: nothing
    print(f"FIGURE 4 rejected/refused uploads ({len(_truncated_pdf()) + 12_000 + 25_029 + 55} bytes sent): "
          f"store {sum(before.values())} bytes in {len(before)} files before and after")
    with served.client("acme") as c:
        assert c.delete("/documents/truncated.pdf").status_code == 404  # nothing was kept to delete
        assert [d["doc_code"] for d in c.get("/documents").json()["documents"]] == ["IPC"]


def _catalog_entry(root: Path, tenant: str, doc_code: str):  # noqa: ANN202
    from contracts import ArtifactStore, Catalog
    from flows.ingest_flow import CATALOG_POINTER

    st = ArtifactStore(root)
    return next(e for e in st.get(st.get_pointer(CATALOG_POINTER), Catalog).entries
                if e.tenant_id == tenant and e.doc_code == doc_code)


def test_a_corrupt_chunk_set_fails_only_its_document_until_repair(served):
    root = served.cli.store
    wages = _catalog_entry(root, "globex", "WagesAct")
    path = root / "objects" / "chunk_set.v1" / wages.chunk_set_sha256[:2] / f"{wages.chunk_set_sha256}.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("employer", "emplayer", 1), encoding="utf-8")  # one word changed
    name = f"chunk_set.v1:{wages.chunk_set_sha256[:12]}"
    # The running API holds the views it loaded when their objects verified; globex's scope is read from disk
    # again once its documents change: removing another document works (and leaves the damaged one listed).
    with served.client("globex") as c:
        assert c.delete("/documents/IPC").status_code == 200
        assert [d["doc_code"] for d in c.get("/documents").json()["documents"]] == ["WagesAct"]

    other = served.ask("acme", THEFT)
    assert other.status_code == 200 and other.json()["status"] == "success", other.text
    refused = served.ask("globex", WAGES)
    assert refused.status_code in (200, 503), refused.text
    assert "WagesAct (wages_act.txt)" in refused.text and str(root) not in refused.text
    assert refused.status_code == 503 or refused.json()["status"] != "success"
    with served.client("globex") as c:
        for response in (c.get("/documents"), c.post("/rag/query", json={"query": WAGES, "mode": "retrieval_only"}),
                         c.post("/retrieval", json={"knowledge_id": "default", "query": WAGES,
                                                    "retrieval_setting": {"top_k": 3}})):
            assert response.status_code != 500 and str(root) not in response.text, response.text

    fsck = served.cli.run("fsck", timeout=600)
    assert fsck.returncode == 1, fsck.stdout + fsck.stderr
    (line,) = [ln for ln in fsck.stdout.splitlines() if name in ln]
    assert line.startswith("corrupt") and "documents: WagesAct (wages_act.txt)" in line and "tenants: globex" in line
    assert "acme" not in fsck.stdout and str(root) not in fsck.stdout

    repair = served.cli.run("repair", timeout=900)
    assert repair.returncode == 0, repair.stdout + repair.stderr
    assert f"removed    {name}" in repair.stdout and "rederived  WagesAct (wages_act.txt)" in repair.stdout
    assert "the store verifies" in repair.stdout
    print("FIGURE fsck:", line.strip(), "| repair:", " / ".join(repair.stdout.strip().splitlines()))
    # Answering is restored: the question goes through the whole chain on the re-derived document again. (Whether
    # the trained verifier then accepts the extractive answer is its own judgement, not this test's: with the
    # model of fc41542 it reads this two-page act's section 22 answer as P(supported) 0.43 < 0.50.)
    again = served.ask("globex", WAGES)
    assert again.status_code == 200, again.text
    body = again.json()
    assert body["reason_code"] not in ("artifact_corrupt", "artifact_missing") and "damaged" not in again.text, again.text
    assert body["status"] == "success" or body["reason_code"] == "claim_not_supported", again.text
    assert "WagesAct_22_0" in body["sources"], again.text
    assert served.cli.run("fsck", timeout=600).returncode == 0


def _referenced(st, index: bool = True) -> set[str]:  # noqa: ANN001
    """Every blob the current catalog references (source bytes, vectors) and, with ``index``, the current index's."""
    from contracts import Catalog, EmbeddingSet, IndexManifest
    from flows.ingest_flow import CATALOG_POINTER, INDEX_POINTER

    entries = st.get(st.get_pointer(CATALOG_POINTER), Catalog).entries
    out = {e.doc_sha256 for e in entries}
    out |= {st.get(f"embedding_set.v1:{e.embedding_set_sha256}", EmbeddingSet).vectors_blob for e in entries}
    if index:
        out |= {sha for _, sha in st.get(st.get_pointer(INDEX_POINTER), IndexManifest).blobs}
    return out


def test_gc_under_a_concurrent_ingest_removes_only_what_nothing_references(served, shared_data):
    from contracts import ArtifactStore

    root = served.cli.store
    st = ArtifactStore(root)
    orphan = st.put_blob(b"an orphan blob no document references", suffix=".pdf")
    stale_upload = root / "uploads" / "acme" / "default" / "left_behind.pdf"
    stale_upload.parent.mkdir(parents=True, exist_ok=True)
    stale_upload.write_bytes(b"an upload copy no document references")
    in_use = _referenced(st, index=False)  # the current documents' bytes and vectors
    assert orphan not in _referenced(st)
    scan = image_only_pdf(served.corpus / "scanned_rules.pdf", shared_data, copies=1)

    ingest = served.cli.popen("ingest", str(scan), "--tenant", "acme", "--doc-code", "ChildRules",
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_marked(served.cli.mark, "tesseract")  # mid-OCR: its source blob is written, in no catalog yet
        gc = served.cli.run("gc", timeout=900)  # it waits for the ingest: the writers' lock
        out, err = ingest.communicate(timeout=900)
    finally:
        if ingest.poll() is None:
            ingest.kill()
            ingest.wait()
    assert ingest.returncode == 0, out + err
    assert gc.returncode == 0, gc.stdout + gc.stderr
    assert "1 upload copies" in gc.stdout, gc.stdout  # and the blobs of indexes no longer current
    assert not st.has_blob(orphan) and not stale_upload.exists()
    assert all(st.has_blob(sha) for sha in in_use)  # every document's bytes and vectors were kept
    assert all(st.has_blob(sha) for sha in _referenced(st))  # and everything in use now, the new index's too
    print(f"FIGURE gc beside an OCR ingest: {gc.stdout.strip()} | {gc.stderr.strip()} | {len(in_use)} blobs in use kept")
    child = _catalog_entry(root, "acme", "ChildRules")
    assert st.has_blob(child.doc_sha256)  # the concurrent ingest's own bytes were kept
    assert served.cli.run("fsck", timeout=600).returncode == 0
    hits = _retrieval(served, "acme", "child labour rules")["results"]
    assert any(h["source_id"].startswith("ChildRules_") for h in hits)
