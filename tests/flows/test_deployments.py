"""The deployments of prefect.yaml on a real Prefect server: ingest and answer triggered through the Prefect API.

A real `prefect server start` on loopback, the `citebound-pool` process work pool, `prefect deploy --all`
and a `prefect worker start` (fixture `deployed_stack` in tests/flows/conftest.py). Each flow run is a fresh
worker subprocess, so the real embedding model loads in it: that is what a deployment does.
"""

from __future__ import annotations

import pytest

from contracts import Answer, ArtifactStore, IngestReport
from flows import deploy
from flows.ingest_flow import CATALOG_POINTER, INDEX_POINTER

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_prefect_yaml_parameters_are_parameters_of_the_flows_it_deploys():
    import importlib
    import inspect

    import yaml

    config = yaml.safe_load((deploy.project_dir() / "prefect.yaml").read_text())
    deployments = {d["name"]: d for d in config["deployments"]}
    assert tuple(deployments) == deploy.DEPLOYMENTS
    for name, spec in deployments.items():
        path, func = spec["entrypoint"].split(":")
        flow = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")), func)
        assert flow.name == name  # so "answer" is "answer/answer"
        assert set(spec["parameters"]) <= set(inspect.signature(flow.fn).parameters), name
        assert spec["work_pool"]["name"] == deploy.POOL
    assert [s["cron"] for s in deployments["ingest"]["schedules"]] == ["0 2 * * *"]
    assert not deployments["answer"]["schedules"] and not deployments["replay"]["schedules"]
    # The eval deployment is scheduled weekly but off until the worker has the data.
    assert [(s["cron"], s["active"]) for s in deployments["eval"]["schedules"]] == [("0 3 * * 1", False)]
    assert deployments["eval"]["parameters"]["check"] is True


@pytest.fixture(scope="module")
def ingest_run(deployed_stack):
    """One `ingest` run with the deployment's default `paths` (the source folder baked in at deploy time)."""
    return deploy.trigger_deployment(
        "ingest", {"doc_code": "ToyAct", "ocr": False}, timeout=300, api_url=deployed_stack.api_url)


def test_ingest_deployment_indexes_its_scheduled_source_folder(deployed_stack, ingest_run):
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: deployed_stack.api_url}), get_client(sync_client=True) as c:
        dep = c.read_deployment_by_name("ingest/ingest")
    assert dep.work_pool_name == deploy.POOL
    assert [s.schedule.cron for s in dep.schedules] == ["0 2 * * *"]
    assert dep.parameters["paths"] == [str(deployed_stack.source_dir.resolve())]
    # The code folder stays a placeholder that the worker fills from its own environment at run time.
    assert dep.pull_steps == [
        {"prefect.deployments.steps.set_working_directory": {"directory": "{{ $CITEBOUND_PROJECT_DIR }}"}}]

    assert ingest_run.state.is_completed(), ingest_run.state
    store = ArtifactStore(deployed_stack.store_root)
    record = store.get_run(str(ingest_run.id))
    assert (record.flow, record.status) == ("ingest", "completed")
    report = next(store.get(r, IngestReport) for r in record.outputs if r.kind == IngestReport.model_fields["kind"].default)
    assert [(f.status, f.doc_code) for f in report.files] == [("ingested", "ToyAct")]
    assert report.n_vectors >= 2
    assert store.get_pointer(INDEX_POINTER).sha256 == report.index_sha256
    assert store.get_pointer(CATALOG_POINTER) is not None


def test_answer_deployment_writes_a_cited_answer_artifact(deployed_stack, ingest_run):
    assert ingest_run.state.is_completed(), ingest_run.state
    run = deploy.trigger_deployment(
        "answer", {"question": "What is the punishment for breaking a toy?"}, timeout=240,
        api_url=deployed_stack.api_url)
    assert run.state.is_completed(), run.state
    answer = deploy.answer_of_flow_run(deployed_stack.store_root, run)
    assert isinstance(answer, Answer)
    assert answer.status == "success", answer.refusal_reason
    assert answer.citations, answer
    assert any(c.source_id.startswith("ToyAct_2") for c in answer.citations), answer.citations
    assert "five hundred rupees" in answer.answer
    # The worker that ran both flows is still the one the fixture started.
    assert deployed_stack.worker.poll() is None
