"""Successors end to end on two made-up codes (an older "IPC" and a newer "BNS", tests/fixtures/successor_codes.py):
ingested, mapped with ``provisions map``, then asked through the answer flow, the HTTP API and the MCP ``ask`` tool.
A second tenant holds only the older code: the map is the store's, the successor's text never crosses tenants."""

from __future__ import annotations

import pytest

from contracts import Answer, ArtifactStore
from tests.api.conftest import start_api
from tests.fixtures.successor_codes import NEW_CODE, OLD_CODE

pytestmark = [pytest.mark.integration]

CHEATING = "What is the punishment for cheating under section 420?"


@pytest.fixture(scope="module")
def store(tmp_path_factory, prefect_harness, module_backends):
    from flows.ingest_flow import ingest_flow
    from flows.provisions_flow import build_provision_map

    base = tmp_path_factory.mktemp("successors")
    root = base / "store"
    (base / "old_code.json").write_text(OLD_CODE, encoding="utf-8")
    (base / "new_code.json").write_text(NEW_CODE, encoding="utf-8")
    for tenant, files in (("default", (("old_code.json", "IPC"), ("new_code.json", "BNS"))),
                          ("solo", (("old_code.json", "IPC"),))):
        for name, code in files:
            report = ingest_flow(paths=[str(base / name)], doc_code=code, tenant=tenant, store=str(root),
                                 embedder="hash", index_uri="faiss")
            assert all(f.status == "ingested" for f in report.files), report
    _, pmap = build_provision_map(str(root), "IPC", "BNS", embedder_name="hash")
    assert [(lk.from_section, lk.to_sections) for lk in pmap.links] == [
        ("53", ("4",)), ("302", ("103",)), ("311", ()), ("378", ("303",)), ("379", ("303",)), ("420", ("318",))]
    assert pmap.to_commencement == "2024-07-01"
    return root


def _ask(root, question: str, **kw) -> Answer:  # noqa: ANN001
    from flows.answer_flow import answer_flow

    return answer_flow(question=question, store=str(root), embedder="hash", **kw)


def test_a_cited_provision_names_its_successor_in_one_checked_line(store):
    answer = _ask(store, CHEATING)
    assert answer.status == "success", answer.refusal_reason
    first, line = answer.answer.splitlines()
    assert first.endswith("[IPC_420_0].")
    assert line == "IPC section 420 is replaced by BNS section 318 (Cheating), in force from 1 July 2024 [BNS_318_0]."
    cited = {c.source_id: c for c in answer.citations}
    [succ] = cited["IPC_420_0"].successors
    assert (succ.code, succ.section, succ.semantic_ids, succ.commencement) == ("BNS", "318", ("BNS_318_0",), "2024-07-01")
    assert "BNS_318_0" in cited  # the line cites the successor's chunk
    run = ArtifactStore(store).get_run(answer.run_id)
    assert [s.stage for s in run.steps][:4] == ["request", "retrieve", "context", "successors"]


def test_a_bare_section_number_in_both_codes_shows_each_codes_provision(store):
    answer = _ask(store, "What is section 302?")
    assert answer.status == "success", answer.refusal_reason
    lines = answer.answer.splitlines()
    assert lines[0].startswith("IPC section 302 (Punishment for murder): ") and lines[0].endswith("[IPC_302_0].")
    assert lines[1].startswith("BNS section 302 (Uttering words with deliberate intent to wound religious feelings): ")
    assert {"IPC_302_0", "BNS_302_0"} <= {c.source_id for c in answer.citations}


def test_a_question_that_asks_for_the_successor_is_answered_from_the_map_with_both_cited(store):
    answer = _ask(store, "Which section of the BNS replaced section 379 of the IPC?")
    assert answer.status == "success", answer.refusal_reason
    assert answer.answer == ("Section 379 of the IPC (Punishment for theft) is replaced by BNS section 303 (Theft), in "
                             "force from 1 July 2024 [IPC_379_0, BNS_303_0].")
    assert [c.source_id for c in answer.citations] == ["IPC_379_0", "BNS_303_0"]
    refused = _ask(store, "Which section of the BNS replaced section 311 of the IPC?")
    assert refused.status == "insufficient_context" and refused.reason_code == "no_successor"


def test_another_tenant_without_the_newer_code_gets_the_map_but_never_its_text(store):
    answer = _ask(store, CHEATING, tenant="solo")
    assert answer.status == "success", answer.refusal_reason
    assert "BNS" not in answer.answer and all(c.source_id.startswith("IPC_") for c in answer.citations)
    [succ] = next(c for c in answer.citations if c.source_id == "IPC_420_0").successors
    assert (succ.code, succ.section, succ.semantic_ids) == ("BNS", "318", ())
    refused = _ask(store, "Which section of the BNS replaced section 379 of the IPC?", tenant="solo")
    assert refused.reason_code == "successor_not_ingested"


def test_switched_off_by_a_setting_the_chain_is_the_one_before(store):
    answer = _ask(store, CHEATING, overrides={"name_successors": "false"})
    assert answer.status == "success" and "BNS" not in answer.answer
    assert all(c.successors == () for c in answer.citations)
    assert "successors" not in [s.stage for s in ArtifactStore(store).get_run(answer.run_id).steps]


def test_replaying_from_successors_with_nothing_changed_writes_the_same_pack(store):
    from flows.replay_flow import replay_flow

    answer = _ask(store, CHEATING)
    record = replay_flow(run_id=answer.run_id, from_stage="successors", store=str(store))
    original = {s.stage: s.output for s in ArtifactStore(store).get_run(answer.run_id).steps}
    replayed = {s.stage: s.output for s in record.steps}
    assert replayed["successors"] == original["successors"] and replayed["validate"] == original["validate"]


def test_the_api_and_the_mcp_tool_carry_the_successors(store):
    from api.answers import path_scrubber
    from api.engine import Engine, EngineConfig
    from api.mcp_tools import AskArgs, Tools

    for api in start_api(store):
        with api.client() as c:
            r = c.post("/rag/query", json={"query": CHEATING, "project_id": "default", "k": 5, "mode": "answer"})
        assert r.status_code == 200, r.text
        body = r.json()
        cited = {c["source_id"]: c for c in body["citations"]}
        assert cited["IPC_420_0"]["successors"][0] == {
            "code": "BNS", "section": "318", "title": "Cheating", "semantic_ids": ["BNS_318_0"],
            "commencement": "2024-07-01"}
    tools = Tools(Engine(EngineConfig(store_root=store, embedder="hash")), path_scrubber(store))
    result = tools.ask("default", AskArgs(query=CHEATING))
    assert result.status == "answered" and "BNS section 318" in result.answer
    cite = next(c for c in result.citations if c.source_id == "IPC_420_0")
    assert [(s.code, s.section, s.source_ids, s.commencement) for s in cite.successors] == [
        ("BNS", "318", ["BNS_318_0"], "2024-07-01")]
