"""The warm answer service: started on first `ask`, reused after, token-protected, stopped with the server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from flows.cli import main
from flows.server import stop_server
from flows.service import ask_service, code_fingerprint, ensure_service, service_state_path
from tests.fixtures.statutes import PENAL_CODE

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def service_store(tmp_path_factory, background_prefect):
    root = tmp_path_factory.mktemp("svc") / "store"
    src = root.parent / "penal_code.txt"
    src.write_text(PENAL_CODE, encoding="utf-8")
    try:
        assert main(["--store", str(root), "ingest", str(src), "--doc-code", "IPC"]) == 0
        yield root
    finally:
        stop_server(root)


def test_ask_goes_through_the_service_and_reuses_it(service_store, capsys):
    capsys.readouterr()
    assert main(["--store", str(service_store), "ask", "What is the punishment for theft?", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert answer["status"] == "success" and answer["citations"][0]["source_id"].startswith("IPC_379")
    first = json.loads(service_state_path(service_store).read_text())
    assert main(["--store", str(service_store), "ask", "What is the capital of Australia?", "--json"]) == 1
    refused = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert refused["answer"] == "I cannot answer based on the provided documents."
    assert json.loads(service_state_path(service_store).read_text())["pid"] == first["pid"]  # reused, not restarted


def test_requests_without_the_token_are_refused(service_store):
    state = ensure_service(service_store)
    req = urllib.request.Request(f"http://127.0.0.1:{state['port']}/ask", method="POST",
                                 data=b'{"question": "What is theft?"}', headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 403
    assert oct(service_state_path(service_store).stat().st_mode & 0o777) == "0o600"


def test_bad_requests_get_a_400_and_the_service_stays_up(service_store):
    state = ensure_service(service_store)
    with pytest.raises(Exception, match="400"):
        ask_service(state, question="   ")
    assert ask_service(state, question="What is cheating?")["kind"] == "answer.v2"


def test_per_question_settings_reach_the_service(service_store):
    state = ensure_service(service_store)
    question = "What is the punishment for theft?"
    assert ask_service(state, question=question)["status"] == "success"
    strict = ask_service(state, question=question, overrides={"min_confidence": "0.999"})
    assert strict["status"] == "low_confidence"
    with pytest.raises(Exception, match="400"):
        ask_service(state, question=question, overrides=["min_confidence=0.999"])
    assert ask_service(state, question=question, overrides={"no_such_setting": "1"})["status"] == "error"


def test_a_service_started_under_other_settings_is_replaced(service_store, monkeypatch):
    first = ensure_service(service_store)
    assert ensure_service(service_store)["pid"] == first["pid"]
    monkeypatch.setenv("CITEBOUND_MIN_CONFIDENCE", "0.999")
    strict = ensure_service(service_store)
    assert strict["pid"] != first["pid"]
    # The new service answers under the caller's settings: what was answered before is now refused.
    answer = ask_service(strict, question="What is the punishment for theft?")
    assert answer["status"] == "low_confidence", answer["status"]
    monkeypatch.delenv("CITEBOUND_MIN_CONFIDENCE")
    relaxed = ensure_service(service_store)
    assert relaxed["pid"] != strict["pid"]
    assert ask_service(relaxed, question="What is the punishment for theft?")["status"] == "success"


def test_a_service_started_from_older_code_is_replaced(service_store):
    first = ensure_service(service_store)
    assert ensure_service(service_store)["pid"] == first["pid"]
    # What an edit or a `git pull` after the service started looks like from its state file.
    path = service_state_path(service_store)
    recorded = json.loads(path.read_text())
    assert recorded["code"] == code_fingerprint()
    path.write_text(json.dumps({**recorded, "code": "0" * 64}))
    fresh = ensure_service(service_store)
    assert fresh["pid"] != first["pid"] and fresh["code"] == code_fingerprint()
    assert ask_service(fresh, question="What is the punishment for theft?")["status"] == "success"


def test_code_fingerprint_follows_the_python_files(tmp_path):
    for package in ("contracts", "stages", "flows"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "a.py").write_text("x = 1\n")
    before = code_fingerprint(tmp_path)
    (tmp_path / "stages" / "a.py").write_text("x = 22\n")
    assert code_fingerprint(tmp_path) != before
    (tmp_path / "stages" / "notes.txt").write_text("not code")
    after = code_fingerprint(tmp_path)
    (tmp_path / "stages" / "notes.txt").write_text("still not code")
    assert code_fingerprint(tmp_path) == after


def test_stop_ends_service_and_server(service_store):
    ensure_service(service_store)
    assert stop_server(service_store) is True
    assert not service_state_path(service_store).exists()
    assert not (service_store / "prefect" / "server.json").exists()
