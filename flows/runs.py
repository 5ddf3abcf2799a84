"""Run records: every flow run writes what it read and produced, so any stage can be replayed from them."""

from __future__ import annotations

import sys
import uuid
from datetime import UTC, datetime

from contracts import ArtifactRef, ArtifactStore, RunRecord, RunStep

__all__ = ["RunRecorder", "current_run_id"]


def current_run_id() -> str:
    """The Prefect flow-run id when inside a flow run, else a fresh uuid (e.g. a task called via ``.fn``)."""
    if "prefect" not in sys.modules:
        return str(uuid.uuid4())  # no flow run without Prefect; looking would import it (0.75 s)
    try:
        from prefect.runtime import flow_run

        rid = flow_run.id
        if rid:
            return str(rid)
    except Exception:  # noqa: BLE001 - outside Prefect there is simply no run context
        pass
    return str(uuid.uuid4())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class RunRecorder:
    """Accumulates the steps of one run and writes its RunRecord (at start as ``running``, then final)."""

    def __init__(
        self,
        store: ArtifactStore,
        *,
        flow: str,
        parameters: dict[str, str],
        question: str | None = None,
        replay_of: str | None = None,
    ) -> None:
        self.store = store
        self.run_id = current_run_id()
        self.flow = flow
        self.parameters = tuple(sorted((k, str(v)) for k, v in parameters.items()))
        self.question = question
        self.replay_of = replay_of
        self.started_at = _now()
        self.steps: list[RunStep] = []
        self._write("running")

    def _write(self, status: str, outputs: list[ArtifactRef] | None = None, error: str | None = None) -> None:
        self.store.put_run(RunRecord(
            run_id=self.run_id, flow=self.flow, started_at=self.started_at,
            finished_at=None if status == "running" else _now(), status=status,  # type: ignore[arg-type]
            question=self.question, parameters=self.parameters, steps=tuple(self.steps),
            outputs=tuple(outputs or ()), replay_of=self.replay_of, error=error,
        ))

    def finish(self, *, outputs: list[ArtifactRef], status: str = "completed", error: str | None = None) -> None:
        self._write(status, outputs, error)
