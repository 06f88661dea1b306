"""Discovery as a job: tasks x harnesses x runs, one `discover` unit each, so discovery runs on any backend and
resumes after a crash like a rewrite job. A unit runs the harness in a fresh sandbox and returns the run; the
driver stores it (kind `discovery`)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rsr_core.harness import HARNESSES
from rsr_core.harness.statem import StateMHarness
from rsr_core.models import Task
from rsr_core.protocols import LLM, SandboxProvider


class DiscoverParams(BaseModel):
    """What `rsr discover` was asked to do (stored with the job, so `rsr jobs resume` needs nothing else)."""

    job_kind: Literal["discover"] = "discover"
    """Which kind of job these parameters belong to."""
    tasks: list[str] = Field(min_length=1)
    """Task ids (task directories are ingested first)."""
    harnesses: list[str] = Field(min_length=1)
    """Harnesses to run each task under."""
    runs: int = Field(1, ge=1)
    """Runs per task and harness."""
    model: str
    """Model name."""
    max_turns: int = Field(30, ge=1)
    """Model calls per run."""
    statem_state_dir: str | None = None
    """Where StateM runs keep their state record (so a re-run unit resumes on the node that ran it)."""

    def unit_ids(self, job_id: str) -> list[tuple[str, str, dict[str, Any]]]:
        """One `discover` unit per task x harness x run, with deterministic ids."""
        units = []
        for task in self.tasks:
            for harness in self.harnesses:
                for run in range(1, self.runs + 1):
                    payload = {"task_id": task, "harness": harness, "run": run}
                    units.append((f"{job_id}/discover/{task}/{harness}/{run:05d}", "discover", payload))
        return units


def run_discover_unit(inputs: dict[str, Any], llm: LLM, sandboxes: SandboxProvider) -> dict[str, Any]:
    """Run one discovery run; the trajectory is returned, not stored."""
    params = DiscoverParams(**inputs["params"])
    task = Task(**inputs["task"])
    harness = inputs["harness"]
    kwargs: dict[str, Any] = {}
    cls = HARNESSES[harness]
    if cls is StateMHarness and params.statem_state_dir:
        name = hashlib.sha256(inputs["unit_id"].encode()).hexdigest()[:16]
        kwargs["state_path"] = Path(params.statem_state_dir) / f"{name}.json"
    started = time.monotonic()
    run = cls(llm, sandboxes, params.model, max_turns=params.max_turns, **kwargs).run(
        task, labels={"rsr.job": inputs["job_id"]}
    )
    traj = run.trajectory.model_copy(update={"job_id": inputs["job_id"]})
    return {
        "trajectory": traj.model_dump(mode="json"),
        "turns": run.turns,
        "claimed": run.claimed,
        "stop_reason": run.stop_reason,
        "seconds": round(time.monotonic() - started, 2),
    }
