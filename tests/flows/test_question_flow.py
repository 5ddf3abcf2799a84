"""The reader-questions flow against a real OpenAI-compatible server on loopback: replies stored per request,
a stopped run resumed without asking again, the set exported with its card; the generator's slices joined and
hash-checked."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from contracts.errors import ConfigError
from contracts.questions import Provision
from contracts.store import ArtifactStore
from flows.question_flow import export_questions, generate_questions, plan_jobs
from flows.question_model import GeneratorModel, assemble_generator
from stages.adapters.openai_llm import OpenAILLM
from tests.llm_server import FakeOpenAIServer

PROVISIONS = (
    Provision(code="BNS", section="303", title="Theft", text="Whoever, intending to take dishonestly any movable "
              "property out of the possession of any person without that person's consent, moves it, commits theft.",
              illustrations=("A cuts down a tree on Z's ground and takes it.", "A baits Z's dog to follow him.")),
    Provision(code="IPC", section="379", title="Punishment for theft", text="Whoever commits theft shall be "
              "punished with imprisonment of either description for a term which may extend to three years."),
)


def _reply(messages: list[dict]) -> str:
    user = messages[-1]["content"]
    if "tree" in user:
        return "Q: My neighbour chopped down a tree in my garden and carried it off. Can I complain?\nQ: Is it?"
    if "dog" in user:
        return "Q: Someone lured my dog away with food so he could keep it. Is that a crime?"
    return "Q: How long can a person go to prison for stealing a bicycle?\nQ: What does section 379 say?"


@pytest.mark.integration
def test_a_stopped_run_resumes_and_the_export_counts_what_was_kept(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "store")
    jobs = plan_jobs(PROVISIONS)
    assert [j.origin for j in jobs] == ["illustration", "illustration", "provision"]
    with FakeOpenAIServer(reply=_reply) as server:
        llm = OpenAILLM("local", base_url=server.base_url)
        assert generate_questions(store, jobs, llm, "m" * 64, limit=2) == (2, 0)
        assert generate_questions(store, jobs, llm, "m" * 64) == (1, 2)  # resumes: asks only the third
        assert generate_questions(store, jobs, llm, "m" * 64) == (0, 3)
        assert len(server.requests) == 3
        assert all(r["temperature"] == 0.0 and r["seed"] == 20261126 for r in server.requests)
        generate_questions(store, jobs, llm, "n" * 64)  # another model's replies are its own
        assert len(server.requests) == 6
    card = export_questions(store, jobs, "m" * 64, "test model", (("x.json", "0" * 64),),
                            tmp_path / "q.jsonl", tmp_path / "card.json")
    rows = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text().splitlines()]
    assert [(r["code"], r["section"], r["origin"]) for r in rows] == [
        ("BNS", "303", "scenario"), ("BNS", "303", "scenario"),  # by rule, one per illustration
        ("BNS", "303", "illustration"), ("BNS", "303", "illustration"), ("IPC", "379", "provision")]
    assert rows[0]["question"].startswith("Ravi cuts down a tree on Meena's ground and takes it. ")
    assert card.questions == 5 and card.requests == 3 and card.provisions == 2
    assert dict(card.by_origin) == {"illustration": 2, "provision": 1, "scenario": 2}
    assert dict(card.dropped_by_rule) == {"too_short": 1, "names_the_law": 1}
    assert card.file_sha256 == hashlib.sha256((tmp_path / "q.jsonl").read_bytes()).hexdigest()


def _slice_packages(root: Path, blobs: list[bytes]) -> tuple[str, ...]:
    names = []
    for i, blob in enumerate(blobs, start=1):
        name = f"cbtest_slice_part{i}"
        (root / name / "data").mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
        (root / name / "data" / f"part{i:02d}.bin").write_bytes(blob)
        names.append(name)
    return tuple(names)


@pytest.mark.unit
def test_the_generator_is_joined_in_order_and_a_wrong_slice_is_refused(tmp_path: Path, monkeypatch) -> None:
    blobs = [b"abc" * 1000, b"def" * 700]
    packages = _slice_packages(tmp_path / "site", blobs)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(blobs)
    model = GeneratorModel("test", packages, len(whole), hashlib.sha256(whole).hexdigest(), "m.gguf")
    path = assemble_generator(tmp_path / "cache", model)
    assert path.read_bytes() == whole
    assert assemble_generator(tmp_path / "cache", model) == path  # cached copy re-checked and kept
    (tmp_path / "site" / packages[1] / "data" / "part02.bin").write_bytes(b"xyz" * 700)
    path.unlink()
    with pytest.raises(ConfigError, match="not the pinned"):
        assemble_generator(tmp_path / "cache", model)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == []  # nothing half-written is left
    for name in packages:
        sys.modules.pop(name, None)
