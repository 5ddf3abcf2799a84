"""Flows and tasks that import without Prefect: ``.fn`` runs without it, anything else builds the real Prefect
object, and a process that has Prefect loaded (a worker loading an entrypoint) gets real flows and tasks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows import lazy_prefect

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_the_answer_path_imports_without_prefect():
    code = ("import sys, inspect; import cli.main, cli.ask, flows.answer_flow, flows.tasks, flows.ingest_flow; "
            "from flows.tasks import retrieve_task; "
            "print('prefect' in sys.modules, inspect.isfunction(retrieve_task.fn), "
            "'prefect' in sys.modules)")
    assert _python(code) == "False True False"


def test_with_prefect_loaded_they_are_prefects_own_objects_and_load_as_entrypoints():
    code = ("import prefect; from prefect.flows import load_flow_from_entrypoint; "
            "import flows.answer_flow as a, flows.tasks as t; "
            "f = load_flow_from_entrypoint('flows/answer_flow.py:answer_flow'); "
            "print(isinstance(a.answer_flow, prefect.Flow), isinstance(t.retrieve_task, prefect.Task), "
            "isinstance(f, prefect.Flow), f.name)")
    assert _python(code) == "True True True answer"


def test_a_stand_in_builds_prefects_object_on_first_use(prefect_harness):
    from prefect.runtime import flow_run, task_run

    def probe(x: int) -> tuple[int, str]:
        return x + 1, str(task_run.id or "")

    def body(x: int) -> tuple[tuple[int, str], str]:
        return deferred_task(x), str(flow_run.id or "")

    deferred_task = lazy_prefect._Deferred("task", probe, {"name": "probe", "cache_policy": lazy_prefect.NO_CACHE})
    deferred_flow = lazy_prefect._Deferred("flow", body, {"name": "probe-flow", "persist_result": False})
    assert deferred_task.fn(1) == (2, "") and deferred_task._real is None, ".fn runs the plain function"
    (value, task_run_id), flow_run_id = deferred_flow(41)
    assert value == 42 and task_run_id and flow_run_id, "a real flow run with a real task run inside"
    assert deferred_flow.name == "probe-flow" and deferred_task.name == "probe"
    from prefect.cache_policies import NO_CACHE

    assert deferred_task.prefect_object().cache_policy is NO_CACHE
