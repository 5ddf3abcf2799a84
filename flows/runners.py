"""Which Prefect task runner the ingest fan-out uses: threads by default, Dask when configured.

``CITEBOUND_TASK_RUNNER=dask`` with ``CITEBOUND_DASK_ADDRESS=tcp://host:8786`` sends the per-file tasks to
a running Dask scheduler (its workers need this project installed and the store path reachable under
the same name, e.g. a shared volume). Without an address a local cluster of ``CITEBOUND_DASK_WORKERS``
worker processes (one thread each) is started for the duration of the flow run.

The flows stay the same code path whichever runner is picked:
``ingest_flow.with_options(task_runner=make_task_runner(settings))(paths=...)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from prefect.task_runners import ThreadPoolTaskRunner

from contracts.errors import ConfigError
from flows.settings import Settings

if TYPE_CHECKING:
    from prefect.task_runners import TaskRunner

__all__ = ["make_task_runner", "local_dask_cluster_kwargs", "local_run_settings"]


def local_dask_cluster_kwargs(n_workers: int, *, processes: bool = True) -> dict[str, object]:
    """LocalCluster options: loopback only, no dashboard, one thread per worker (the stages hold the GIL).

    >>> assert local_dask_cluster_kwargs(2)["n_workers"] == 2
    """
    return {
        "n_workers": n_workers,
        "threads_per_worker": 1,
        "processes": processes,
        "host": "127.0.0.1",
        # No bokeh dashboard: nothing to serve, and it would bind a port on every interface.
        "dashboard_address": None,
    }


def make_task_runner(settings: Settings, *, processes: bool = True) -> TaskRunner:
    """The task runner ``settings`` ask for.

    ``processes=False`` keeps a local Dask cluster's workers as threads of this process (tests use it so
    that embedders registered in-process are visible to the workers).

    >>> assert type(make_task_runner(Settings(task_runner="thread"))).__name__ == "ThreadPoolTaskRunner"
    """
    if settings.task_runner == "thread":
        return ThreadPoolTaskRunner()
    if settings.task_runner == "dask":
        try:
            from prefect_dask import DaskTaskRunner
        except ImportError as exc:  # pragma: no cover - prefect-dask is a declared dependency
            raise ConfigError("CITEBOUND_TASK_RUNNER=dask needs the prefect-dask package") from exc
        if settings.dask_address:
            return DaskTaskRunner(address=settings.dask_address)
        if settings.dask_workers < 1:
            raise ConfigError(f"CITEBOUND_DASK_WORKERS must be >= 1, got {settings.dask_workers}")
        return DaskTaskRunner(cluster_kwargs=local_dask_cluster_kwargs(settings.dask_workers, processes=processes))
    raise ConfigError(f"unknown task runner {settings.task_runner!r}: use 'thread' or 'dask'")


@contextmanager
def local_run_settings(api_url: str | None = None) -> Iterator[None]:
    """Prefect settings for flows run in this (CLI) process: no flow-run heartbeat thread, and ``api_url``.

    Why: each flow run starts a heartbeat thread that sleeps in 1 s steps and is joined when the run ends,
    which costs 0.5-1 s per run on its own (measured by bench/cli.py: Prefect overhead per answer run 1.06 s
    with it, 0.24 s without). Heartbeats let a server mark a crashed *worker-run* flow; a CLI run reports
    its own crash, so it does not need them. Deployments run by a worker keep Prefect's default.
    Prefect reads its settings once at import, so a server URL learnt later is entered here as well.
    """
    from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    updates: dict = {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    if api_url:
        updates[PREFECT_API_URL] = api_url
    with temporary_settings(updates=updates):
        yield
