"""The acceptance check of issue 11, through the CLI in fresh processes: after a code change to
``stages/text/units.py``, asking a question asked before recomputes ``validate`` (``cached: false`` in the run
record) while the stages that do not reach that module stay cached, and ``replay --from validate`` of the
earlier run gives the current code's answer.

A temporary copy of the project is run with ``PYTHONPATH`` pointing at it, against the session's Prefect test
server. A small driver registers the test doubles (hash embedder as ``minilm``, a scripted answerer as
``scripted``) and calls ``cli.main.main`` for each command line, so the run takes seconds, not minutes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contracts import ArtifactStore
from tests.fixtures.statutes import PENAL_CODE

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "What is the punishment for theft?"
# "3 years" is supported by the evidence's "three years" only while number words are parsed as numbers.
SCRIPTED_ANSWER = ("Whoever commits theft shall be punished with imprisonment for a term which may extend to "
                   "3 years [IPC_379_0].")

DRIVER = f"""
import contextlib, io, json, sys
from flows import backends
from tests.fakes import HashEmbedder, ScriptedLLM
backends.register_embedder("minilm", lambda: HashEmbedder(dim=64))
backends.register_llm("scripted", lambda spec: ScriptedLLM(lambda prompt: {SCRIPTED_ANSWER!r}))
from tests.fakes import WordOverlapVerifier
backends.register_verifier("citebound", lambda: WordOverlapVerifier({{"": 0.9}}, name="lenient"))
from cli.main import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    results.append({{"code": code, "out": out.getvalue(), "err": err.getvalue()}})
print("RESULTS " + json.dumps(results))
"""


def _copy_project(dest: Path) -> Path:
    for package in ("contracts", "stages", "flows", "tests/fixtures"):
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    for module in ("tests/__init__.py", "tests/fakes.py"):
        shutil.copy2(ROOT / module, dest / module)
    return dest


def _run(project: Path, *argvs: list[str]) -> list[dict]:
    from prefect.settings import PREFECT_API_URL

    env = {k: v for k, v in os.environ.items() if k not in ("CITEBOUND_HOME", "PYTHONPATH")}
    env.update(PYTHONPATH=str(project), CITEBOUND_PREFECT="ephemeral", CITEBOUND_SERVICE="off",
               PREFECT_API_URL=str(PREFECT_API_URL.value()))
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(list(argvs))], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULTS ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    return json.loads(line[len("RESULTS "):])


def _steps(store: ArtifactStore, run_id: str) -> dict[str, object]:
    return {s.stage: s for s in store.get_run(run_id).steps}


def test_a_code_change_recomputes_validate_and_replay_gives_the_current_answer(tmp_path, prefect_harness):
    project = _copy_project(tmp_path / "project")
    root = tmp_path / "store"
    source = tmp_path / "penal_code.txt"
    source.write_text(PENAL_CODE, encoding="utf-8")
    store = ["--store", str(root)]
    ask = [*store, "ask", QUESTION, "--llm", "scripted", "--json"]

    ingest, first, again = _run(project, [*store, "ingest", str(source), "--doc-code", "IPC"], ask, ask)
    assert ingest["code"] == 0, ingest
    before, repeat = json.loads(first["out"]), json.loads(again["out"])
    assert first["code"] == 0 and before["status"] == "success", before
    st = ArtifactStore(root)
    assert _steps(st, repeat["run_id"])["validate"].cached  # unchanged code: served from the cache

    # The change of the issue: number parsing in the module the claim checks live in.
    text_units = project / "stages" / "text" / "units.py"
    text_units.write_text(text_units.read_text(encoding="utf-8") + '\n_UNITS.pop("three")\n', encoding="utf-8")

    after_ask, replay = _run(project, ask, [*store, "replay", before["run_id"], "--from", "validate", "--json"])
    after = json.loads(after_ask["out"])
    steps = _steps(st, after["run_id"])
    assert not steps["validate"].cached  # recomputed under the new code
    assert steps["retrieve"].cached and steps["context"].cached and steps["generate"].cached  # they do not reach it
    assert steps["validate"].inputs == _steps(st, before["run_id"])["validate"].inputs  # same pack, same draft
    assert steps["validate"].code_version != _steps(st, before["run_id"])["validate"].code_version
    assert after["status"] == "hallucination_detected" and after_ask["code"] == 1, after

    replayed = json.loads(replay["out"])
    assert replayed["run"]["replay_of"] == before["run_id"]
    assert replayed["answer"]["status"] == after["status"]
    assert replayed["answer"]["answer"] == after["answer"]
    assert replayed["run"]["outputs"] == [o.model_dump(mode="json") for o in st.get_run(after["run_id"]).outputs]
