"""Issue 38's acceptance on a real store: the whole IPC (the civictech JSON) and the BNS 2023 PDF ingested with the
real MiniLM, the successor map built from the two ingested documents, then the questions a new user asked, through
the CLI as they would ask them."""

from __future__ import annotations

import json

import pytest

from cli.main import main

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def ipc_bns(tmp_path_factory, prefect_harness, shared_data):
    root = tmp_path_factory.mktemp("ipc-bns") / "store"
    assert main(["--store", str(root), "ingest", str(shared_data / "indian-acts-json" / "ipc.json"),
                 "--doc-code", "IPC"]) == 0
    assert main(["--store", str(root), "ingest", str(shared_data / "statute-pdfs" / "Bhartiya_Nyay_Sanhita_BNS.pdf"),
                 "--doc-code", "BNS"]) == 0
    assert main(["--store", str(root), "provisions", "map", "--from", "IPC", "--to", "BNS"]) == 0
    return root


def _ask(capsys, root, question: str) -> dict:  # noqa: ANN001
    capsys.readouterr()
    main(["--store", str(root), "ask", question, "--json"])
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def _cited(answer: dict, code: str, section: str) -> list[dict]:
    return [c for c in answer["citations"] if c["source_id"].startswith(f"{code}_{section}_")]


def test_the_cheating_question_answers_from_ipc_420_and_names_bns_318_citing_its_chunk(ipc_bns, capsys):
    answer = _ask(capsys, ipc_bns, "What is the punishment for cheating under section 420?")
    assert answer["status"] == "success", answer
    [ipc] = _cited(answer, "IPC", "420")
    assert answer["answer"].splitlines()[0].endswith(f"[{ipc['source_id']}].")
    [succ] = ipc["successors"]
    assert (succ["code"], succ["section"], succ["commencement"]) == ("BNS", "318", "2024-07-01")
    assert succ["semantic_ids"] and _cited(answer, "BNS", "318")[0]["source_id"] == succ["semantic_ids"][0]
    assert f"BNS section 318 (Cheating), in force from 1 July 2024 [{succ['semantic_ids'][0]}]" in answer["answer"]


def test_a_bare_section_302_shows_both_codes_section_302(ipc_bns, capsys):
    answer = _ask(capsys, ipc_bns, "What is section 302?")
    assert answer["status"] == "success", answer
    assert _cited(answer, "IPC", "302") and _cited(answer, "BNS", "302")
    lines = answer["answer"].splitlines()
    assert lines[0].startswith("IPC section 302 (Punishment for murder): ")
    assert lines[1].startswith("BNS section 302 (Uttering words, etc., with deliberate intent to wound religious ")
    # IPC 302 itself was replaced by BNS 103: named, and cited, on a line of its own.
    assert any(line.startswith("IPC section 302 is replaced by BNS section 103 (Punishment for murder)") for line in lines)


def test_which_bns_section_replaced_ipc_379_is_answered_303_with_both_cited(ipc_bns, capsys):
    answer = _ask(capsys, ipc_bns, "Which section of the BNS replaced section 379 of the IPC?")
    assert answer["status"] == "success", answer
    assert answer["answer"].startswith("Section 379 of the IPC (Punishment for theft) is replaced by BNS section 303 "
                                       "(Theft)")
    assert _cited(answer, "IPC", "379") and _cited(answer, "BNS", "303")
    called = _ask(capsys, ipc_bns, "What is IPC 420 called under the BNS?")
    assert called["status"] == "success" and _cited(called, "BNS", "318"), called
    gone = _ask(capsys, ipc_bns, "Which section of the BNS replaced section 377 of the IPC?")
    assert gone["status"] == "insufficient_context" and gone["reason_code"] == "no_successor", gone


@pytest.mark.xfail(strict=True, reason="not met yet: with the BNS's arrangement of sections flagged as front matter "
                                       "(never evidence), the question is still not answered from BNS s.303")
def test_the_punishment_for_theft_under_the_bns_is_answered_from_bns_303(ipc_bns, capsys):
    answer = _ask(capsys, ipc_bns, "What is the punishment for theft under the Bharatiya Nyaya Sanhita?")
    assert answer["status"] == "success", answer
    assert {c["source_id"].rsplit("_", 1)[0] for c in answer["citations"]} == {"BNS_303"}, answer["citations"]
