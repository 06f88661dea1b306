"""`rsr discover` around its job (rsr_core/jobs/discovery.py): the task it runs, what it prints per run, and the
harbor job dirs it writes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rsr_core.formats.reading import PREVIEW_CHARS, FormatError
from rsr_core.harness.trial_dir import write_job_result, write_trial
from rsr_core.ingest.fs import shown
from rsr_core.ingest.tasks import content_hash, read_task_dir
from rsr_core.models import Task
from rsr_core.store import Store


class RunSummary(BaseModel):
    """One discovery run, as printed by `rsr discover`."""

    run: int
    """1-based run number."""
    trajectory_id: str | None
    """Stored trajectory (None when the run failed to run)."""
    task_id: str
    """Task solved."""
    harness: str
    """Harness used."""
    model: str
    """Model name."""
    reward: float | None
    """Verifier reward (None: not verified, e.g. a run ended by a resource limit)."""
    verifier_tampered: bool = False
    """The run changed the verifier's own ground (never counts as solved)."""
    turns: int
    """Model calls made."""
    claimed: bool
    """The agent claimed completion."""
    stop_reason: str
    """completed, passed, max_turns, wall_clock_budget, claim_budget, resource_limit, sandbox_error,
    context_length, model_error, or failed (the run failed to run: no trajectory)."""
    error: str | None = None
    """Why the run ended badly or failed to run (one line)."""
    seconds: float
    """Wall-clock time of the run."""


class TaskNotFound(LookupError):
    """The task reference is neither a task directory nor a stored task id."""


def resolve_task(store: Store, ref: str) -> Task:
    """A task from a directory (ingested first) or a stored id, with its hidden files."""
    path = Path(ref)
    if path.is_dir():
        try:
            task = read_task_dir(path)
            task_hash = content_hash(path)
        except FormatError as exc:
            raise TaskNotFound(f"{shown(ref)}: {exc}") from None
        try:
            store.write_task(task, task_hash)
        except (OverflowError, TypeError, ValueError) as exc:  # a value the store cannot take
            raise TaskNotFound(f"{shown(ref)}: could not be stored: {str(exc)[:PREVIEW_CHARS]}") from None
        return task
    stored = store.get_task(ref, with_hidden=True)
    if stored is None or not any(f.role == "test" for f in stored.files):
        raise TaskNotFound(f"no task {ref!r} with hidden tests in the store; pass the task directory instead")
    return stored


FAILED_WITH_REASON = frozenset({"resource_limit", "sandbox_error", "context_length", "model_error"})
"""Stop reasons whose trajectory names the failure (its `exception`), printed as the run's one-line reason."""


def summary_of(
    unit: dict[str, Any], result: dict[str, Any] | None, error: str | None, model: str
) -> RunSummary:
    """What `rsr discover` prints for a finished `discover` unit (or one that failed to run)."""
    p = unit["payload"]
    if result is None:
        return RunSummary(
            run=p["run"],
            trajectory_id=None,
            task_id=p["task_id"],
            harness=p["harness"],
            model=model,
            reward=None,
            turns=0,
            claimed=False,
            stop_reason="failed",
            error=" ".join((error or "").split())[:500],
            seconds=0.0,
        )
    traj = result["trajectory"]
    stop = result["stop_reason"]
    return RunSummary(
        run=p["run"],
        trajectory_id=traj["trajectory_id"],
        task_id=p["task_id"],
        harness=p["harness"],
        model=model,
        reward=traj["reward"],
        verifier_tampered=traj.get("verifier_tampered", False),
        turns=result["turns"],
        claimed=result["claimed"],
        stop_reason=stop,
        error=traj.get("exception") if stop in FAILED_WITH_REASON else None,
        seconds=result.get("seconds", 0.0),
    )


def write_job_dirs(store: Store, job_id: str, out_dir: Path, force: bool = False) -> list[Path]:
    """The harbor job dirs of a finished discovery job, one per task and harness (`<time>__<harness>__<task>`),
    each written under a temporary name and moved into place (rsr_core/outputs.py); returns them."""
    from rsr_core.outputs import AtomicDir
    from rsr_core.store import jobs as jobs_sql

    with store.reading() as cur:
        done = jobs_sql.discover_results(cur, job_id)
    groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for run in done:
        groups.setdefault((run["task_id"], run["harness"]), []).append((run["run"], run["trajectory_id"]))
    stamp = f"{datetime.now(UTC):%Y-%m-%d__%H-%M-%S}"
    written = []
    for (task_id, harness), runs in sorted(groups.items()):
        final = out_dir / f"{stamp}__{harness}__{task_id}"
        target = AtomicDir(final, force)
        try:
            task = store.get_task(task_id)
            trajs = []
            for number, tid in sorted(runs):
                traj = store.get_trajectory(tid)
                if traj is None:
                    continue
                trajs.append(traj)
                name = task.name if task and task.name else task_id
                write_trial(
                    target.temp, traj, name, f"{task_id}__run{number}", task.path if task else None, final
                )
            write_job_result(target.temp, trajs, final)
            target.commit()
        except BaseException:
            target.abort()
            raise
        written.append(final)
    return written
