"""``citebound server``: the user's local Prefect server, the ``citebound-pool`` process work pool, the
deployments of ``prefect.yaml`` for one store, and a worker in the foreground (as Prefect runs one: Ctrl-C
stops it), all on 127.0.0.1.

The server is the same per-user background server the CLI reuses (``flows.server.ensure_server``);
``citebound server --stop`` runs ``prefect server stop``. The deployments carry the store in their
environment, so deploying another store's replaces them on that server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contracts.errors import ConfigError
from flows.server import ensure_server, prefect_home

if TYPE_CHECKING:
    from prefect.client.schemas.objects import FlowRun

    from contracts import Answer

__all__ = [
    "POOL",
    "DEPLOYMENTS",
    "project_dir",
    "deployment_env",
    "ensure_work_pool",
    "deploy_all",
    "start_worker",
    "serve_deployments",
    "trigger_deployment",
    "answer_of_flow_run",
]

POOL = "citebound-pool"
# Deployment names in prefect.yaml; each equals its flow's name, so "answer" means "answer/answer".
DEPLOYMENTS = ("ingest", "answer", "replay", "eval")


def project_dir() -> Path:
    """The checkout holding ``prefect.yaml`` (the deployments' working directory)."""
    return Path(__file__).resolve().parent.parent


def _prefect_dir(store_root: Path) -> Path:
    path = Path(store_root).resolve() / "prefect"
    path.mkdir(parents=True, exist_ok=True)
    return path


def deployment_env(store_root: Path, api_url: str, *, source_dir: Path | None = None) -> dict[str, str]:
    """Environment for ``prefect deploy`` and the worker: it fills prefect.yaml's ``{{ $VAR }}`` placeholders."""
    store_root = Path(store_root).resolve()
    env = {
        **os.environ,
        "PREFECT_API_URL": api_url,
        "PREFECT_HOME": str(prefect_home()),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": os.environ.get("PREFECT_LOGGING_LEVEL", "WARNING"),
        "CITEBOUND_HOME": str(store_root),
        "CITEBOUND_PROJECT_DIR": str(project_dir()),
        "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
        "TRANSFORMERS_OFFLINE": os.environ.get("TRANSFORMERS_OFFLINE", "1"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    src = source_dir or os.environ.get("CITEBOUND_SOURCE_DIR") or project_dir() / "samples" / "corpus"
    env["CITEBOUND_SOURCE_DIR"] = str(Path(src).expanduser().resolve())
    return env


def _api_settings(api_url: str):  # noqa: ANN202 - a context manager from Prefect
    # Prefect reads its settings once at import; a URL learnt later has to be entered explicitly.
    from prefect.settings import PREFECT_API_URL, temporary_settings

    return temporary_settings(updates={PREFECT_API_URL: api_url})


def ensure_work_pool(api_url: str, name: str = POOL) -> bool:
    """Create the process work pool ``name`` unless it exists. Returns whether it was created."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    with _api_settings(api_url), get_client(sync_client=True) as client:
        try:
            client.read_work_pool(name)
            return False
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(
                name=name, type="process", base_job_template=ProcessWorker.get_default_base_job_template()))
            return True


def deploy_all(store_root: Path, api_url: str, *, source_dir: Path | None = None, timeout: float = 180.0) -> None:
    """``prefect --no-prompt deploy --all`` from the project folder, against ``api_url``."""
    log_path = _prefect_dir(store_root) / "deploy.log"
    env = deployment_env(store_root, api_url, source_dir=source_dir)
    # Left unset on purpose: the pull step's `{{ $CITEBOUND_PROJECT_DIR }}` then stays a placeholder that each
    # worker fills from its own environment at run time, so workers on other machines may keep their checkout
    # elsewhere. (Exported at deploy time, Prefect would bake this machine's path into the deployment.)
    env.pop("CITEBOUND_PROJECT_DIR", None)
    with open(log_path, "ab") as log:
        proc = subprocess.run(
            [sys.executable, "-m", "prefect", "--no-prompt", "deploy", "--all"],
            cwd=project_dir(), env=env,
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout, check=False,
        )
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace")[-1500:]
        raise ConfigError(f"`prefect deploy --all` failed (exit {proc.returncode}); see {log_path}:\n{tail}")


def start_worker(
    store_root: Path, api_url: str, *, pool: str = POOL, query_seconds: float = 2.0, source_dir: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start ``prefect worker start --pool POOL`` for this store; the caller owns (and stops) the process.

    SIGINT stops a Prefect worker cleanly (SIGTERM prints an asyncio traceback)."""
    log_path = _prefect_dir(store_root) / "worker.log"
    env = deployment_env(store_root, api_url, source_dir=source_dir)
    # Poll the pool every few seconds (default 10 s): an on-demand `answer` should not wait long to start.
    env.setdefault("PREFECT_WORKER_QUERY_SECONDS", str(query_seconds))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "prefect", "worker", "start", "--pool", pool, "--type", "process"],
            cwd=project_dir(), env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
    time.sleep(0.5)
    if proc.poll() is not None:
        raise ConfigError(f"the Prefect worker exited at start-up (code {proc.returncode}); see {log_path}")
    return proc


def serve_deployments(store_root: Path, *, with_worker: bool = True) -> int:
    """Server + pool + deployments for this store, then the worker in the foreground until Ctrl-C. Exit code."""
    store_root = Path(store_root).resolve()
    store_root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    api_url = ensure_server(store_root)
    created = ensure_work_pool(api_url)
    deploy_all(store_root, api_url)
    env = deployment_env(store_root, api_url)
    print(f"Prefect API    {api_url}   (the user's server; state in {prefect_home()})")
    print(f"work pool      {POOL} ({'created' if created else 'existing'}, type process)")
    print(f"deployments    {', '.join(f'{d}/{d}' for d in DEPLOYMENTS)} from {project_dir() / 'prefect.yaml'}")
    print(f"               ingest is scheduled daily 02:00 UTC on {env['CITEBOUND_SOURCE_DIR']}")
    print(f"ready in {time.perf_counter() - started:.1f} s. Try:")
    print(f"  PREFECT_API_URL={api_url} prefect deployment run answer/answer -p question='...'")
    print("Stop the server with: citebound server --stop")
    if not with_worker:
        print(f"worker         not started: run `PREFECT_API_URL={api_url} prefect worker start --pool {POOL}`")
        return 0
    print(f"worker         running here (log {store_root / 'prefect' / 'worker.log'}); Ctrl-C stops it", flush=True)
    proc = start_worker(store_root, api_url)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        # The terminal's Ctrl-C reached the worker too (same process group): let it finish shutting down.
        return proc.wait()


def trigger_deployment(
    name: str, parameters: dict[str, Any], *, timeout: float, api_url: str | None = None, poll_interval: float = 1.0
) -> FlowRun:
    """Run deployment ``name`` ("answer" or "answer/answer") through the Prefect API; wait up to ``timeout`` s.

    Returns the flow run (``.state`` tells how it ended). citebound's flows do not persist Prefect results:
    what a run produced is in the store, under a run record whose id is the flow run's id
    (see ``answer_of_flow_run``).
    """
    from prefect.deployments import run_deployment

    full = name if "/" in name else f"{name}/{name}"
    url = api_url or os.environ.get("PREFECT_API_URL")
    if not url:
        raise ConfigError("no Prefect API: set PREFECT_API_URL or run `citebound server` first")
    with _api_settings(url):
        return run_deployment(full, parameters=parameters, timeout=timeout, poll_interval=poll_interval,
                              as_subflow=False)


def answer_of_flow_run(store_root: Path, flow_run: FlowRun) -> Answer:
    """The Answer artifact an ``answer`` deployment run wrote into the store."""
    from contracts import Answer, ArtifactStore, kind_of

    store = ArtifactStore(Path(store_root).resolve())
    record = store.get_run(str(flow_run.id))
    for ref in record.outputs:
        if ref.kind == kind_of(Answer):
            return store.get(ref, Answer).model_copy(update={"run_id": record.run_id})
    raise ConfigError(f"flow run {flow_run.id} ({record.status}) wrote no Answer: {record.error or 'no outputs'}")
