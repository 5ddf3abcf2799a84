"""A damaged store at start-up, and a store on a full (then read-only) disk, against a real `citebound api`.

- One word changed in one tenant's chunk set while the API is down: `citebound api` still starts; the other
  tenant's answers are exactly what they were; the damaged document's tenant is refused by the document's name
  (``artifact_corrupt``, no server path) where its question needs it; `fsck` names it, `repair` restores it and
  the same running API answers again.
- The store on a small tmpfs, filled to the last byte: an upload, a retrieval, Dify's /retrieval and an answer all
  say 507 ``storage_unavailable`` with the same detail; `citebound ingest` says it in one line and exits 2, with
  the user's Prefect server and with an ephemeral one. Remounted read-only: the same, 503.
"""

from __future__ import annotations

import errno
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest

from tests.faults.conftest import Cli, kill_marked, start_api
from tests.fixtures.statutes import PENAL_CODE, WAGES_ACT

pytestmark = [pytest.mark.integration, pytest.mark.slow]

THEFT = "What is the punishment for theft?"
WAGES = "What is the penalty under section 22 for paying less than the minimum wages?"


def _client(api, key: str | None = None) -> httpx.Client:  # noqa: ANN001
    return httpx.Client(base_url=api.url, headers={"authorization": f"Bearer {key}"} if key else {}, timeout=600)


def _upload(api, key: str | None, name: str, text: str, code: str) -> httpx.Response:  # noqa: ANN001
    with _client(api, key) as c:
        return c.post("/documents", files={"files": (name, text.encode(), "text/plain")}, data={"doc_code": code})


def _ask(api, key: str | None, question: str, **extra: object) -> httpx.Response:  # noqa: ANN001
    with _client(api, key) as c:
        return c.post("/rag/query", json={"query": question, **extra})


def test_a_restarted_api_serves_around_a_damaged_chunk_set(tmp_path, prefect_env):
    from contracts import ArtifactStore, Catalog
    from flows.ingest_flow import CATALOG_POINTER

    cli = Cli(tmp_path / "store", prefect_env)
    keys = {}
    for tenant in ("globex", "acme"):
        done = cli.run("keys", "add", "--tenant", tenant, timeout=300)
        assert done.returncode == 0, done.stderr
        keys[tenant] = done.stdout.strip().splitlines()[-1]
    api = start_api(cli, None, auth=True)
    try:
        for tenant, name, text, code in (("globex", "penal_code.txt", PENAL_CODE, "IPC"),
                                         ("globex", "wages_act.txt", WAGES_ACT, "WagesAct"),
                                         ("acme", "penal_code.txt", PENAL_CODE, "IPC")):
            r = _upload(api, keys[tenant], name, text, code)
            assert r.status_code == 200 and r.json()[0]["status"] == "ingested", r.text
        before = _ask(api, keys["acme"], THEFT, mode="retrieval_only", k=20).json()
        answered = _ask(api, keys["acme"], THEFT).json()
    finally:
        api.stop()

    st = ArtifactStore(cli.store)
    wages = next(e for e in st.get(st.get_pointer(CATALOG_POINTER), Catalog).entries
                 if e.tenant_id == "globex" and e.doc_code == "WagesAct")
    path = cli.store / "objects" / "chunk_set.v1" / wages.chunk_set_sha256[:2] / f"{wages.chunk_set_sha256}.json"
    path.write_text(path.read_text(encoding="utf-8").replace("employer", "emplayer", 1), encoding="utf-8")
    name = f"chunk_set.v1:{wages.chunk_set_sha256[:12]}"

    api = start_api(cli, None, auth=True)  # it starts: the damage is one document's, not the API's
    try:
        after = _ask(api, keys["acme"], THEFT, mode="retrieval_only", k=20)
        assert after.status_code == 200, after.text
        assert after.json()["results"] == before["results"] and after.json()["index_sha256"] == before["index_sha256"]
        again = _ask(api, keys["acme"], THEFT)
        assert again.status_code == 200 and again.json()["status"] == "success", again.text
        assert again.json()["answer"] == answered["answer"]

        refused = _ask(api, keys["globex"], WAGES)
        assert refused.status_code == 200, refused.text
        body = refused.json()
        assert body["status"] != "success" and body["reason_code"] == "artifact_corrupt", refused.text
        assert "WagesAct (wages_act.txt)" in body["refusal_reason"] and str(cli.store) not in refused.text
        with _client(api, keys["globex"]) as c:
            for response in (c.get("/documents"),
                             c.post("/rag/query", json={"query": WAGES, "mode": "retrieval_only"}),
                             c.post("/retrieval", json={"knowledge_id": "default", "query": WAGES,
                                                        "retrieval_setting": {"top_k": 3}})):
                assert response.status_code != 500 and str(cli.store) not in response.text, response.text

        fsck = cli.run("fsck", timeout=600)
        assert fsck.returncode == 1, fsck.stdout + fsck.stderr
        (line,) = [ln for ln in fsck.stdout.splitlines() if name in ln]
        assert line.startswith("corrupt") and "WagesAct (wages_act.txt)" in line and "tenants: globex" in line
        assert "acme" not in fsck.stdout

        repair = cli.run("repair", timeout=900)
        assert repair.returncode == 0 and "the store verifies" in repair.stdout, repair.stdout + repair.stderr
        mended = _ask(api, keys["globex"], WAGES)
        assert mended.status_code == 200 and mended.json()["reason_code"] != "artifact_corrupt", mended.text
        assert "WagesAct_22_0" in mended.json()["sources"], mended.text
        assert _ask(api, keys["acme"], THEFT, mode="retrieval_only", k=20).json()["results"] == before["results"]
    finally:
        api.stop()
        kill_marked(cli.mark)


# ------------------------------------------------------------------------------------------ a full disk


@pytest.fixture
def small_disk(tmp_path):
    """A 48 MB tmpfs at tmp_path/disk (root and mount(8) needed), unmounted after."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(folder: Path) -> None:
    """Write until the file system has not one byte left."""
    with open(folder / "filler", "wb", buffering=0) as fh:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


def _one_story(api, status: int, cause: str) -> None:  # noqa: ANN001
    """Upload, retrieval, Dify's retrieval and an answer: each the same status, ``storage_unavailable`` and cause."""
    fresh = f"What is the punishment for theft? ({uuid.uuid4().hex[:8]})"  # a new request: it must be written
    upload = _upload(api, None, "kite_act.txt", "5. Flying kites.-Whoever flies a kite shall be fined.\n", "Kites")
    retrieval = _ask(api, None, fresh, mode="retrieval_only")
    answer = _ask(api, None, fresh + " again")
    with _client(api) as c:
        dify = c.post("/retrieval", json={"knowledge_id": "default", "query": fresh + " dify",
                                          "retrieval_setting": {"top_k": 3}})
    for r in (upload, retrieval, answer):
        assert r.status_code == status and r.json()["error"] == "storage_unavailable", r.text
        assert r.json()["detail"].startswith("the store cannot ") and r.json()["detail"].endswith(cause), r.text
    assert retrieval.json()["detail"] == answer.json()["detail"]  # one story, word for word
    assert dify.status_code == status and dify.json()["error_code"] == 5001 and cause in dify.json()["error_msg"]
    assert str(api.cli.store) not in upload.text + retrieval.text + answer.text + dify.text


def _ingest_says_one_line(cli: Cli, corpus: Path, cause: str) -> None:
    done = cli.run("ingest", str(corpus / "wages_act.txt"), "--doc-code", "WagesAct", timeout=600)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr  # no Prefect report, no traceback: the line below and nothing else
    assert lines[0].startswith(f"citebound: cannot write {cli.store}") and lines[0].endswith(cause), lines[0]


def test_a_full_or_read_only_store_is_one_story(small_disk, tmp_path, prefect_env):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "wages_act.txt").write_text(WAGES_ACT, encoding="utf-8")
    cli = Cli(small_disk / "store", prefect_env)
    ephemeral = Cli(cli.store, {**prefect_env, "CITEBOUND_PREFECT": "none",
                                "CITEBOUND_USER_HOME": str(tmp_path / "user-ephemeral")})
    (tmp_path / "user-ephemeral").mkdir()
    api = start_api(cli)
    try:
        r = _upload(api, None, "penal_code.txt", PENAL_CODE, "IPC")
        assert r.status_code == 200 and r.json()[0]["status"] == "ingested", r.text
        _fill(small_disk)
        _one_story(api, 507, "no space left on device")
        for command in (cli, ephemeral):  # with the user's Prefect server, and with an ephemeral one
            _ingest_says_one_line(command, corpus, "no space left on device")

        (small_disk / "filler").unlink()
        api.stop()  # nothing may hold a file open for writing while the disk is remounted read-only
        remount = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True)
        assert remount.returncode == 0, remount.stderr
        api = start_api(cli)
        _one_story(api, 503, "read-only file system")
        for command in (cli, ephemeral):
            _ingest_says_one_line(command, corpus, "read-only file system")
    finally:
        api.stop()
        kill_marked(cli.mark)
        kill_marked(ephemeral.mark)
