"""Writing runs in harbor's job layout: <job>/result.json, <job>/<trial>/{config.json, result.json,
agent/trajectory.json, verifier/reward.txt, verifier/test-stdout.txt}.

Both result.json files follow harbor's own models (`TrialResult`, `JobResult` of harbor 0.25): ids are UUIDs
(derived from our ids, so rewriting a run gives the same file), the trial names its task as harbor does (a
local task directory, or an `org/name` package), its config, a task checksum, and exceptions as
`{exception_type, exception_message, exception_traceback, occurred_at}`. The trajectory is our ATIF export.

Agents harbor does not know are named as harbor names a custom agent (`--agent-import-path`): the trial's
config gives the class's import path and no agent name, and `agent_info.name` is what the class's `name()`
says. RSRT and StateM extend our Terminus 2, which speaks harbor's Terminus 2 protocol, so their runs are
named as a custom agent built on harbor's `Terminus2` (which inherits its name) would be: `terminus-2`, the name
harbor's own tools (`harbor traces export`) need to read an ATIF trajectory. What tells the harnesses apart
stays in the import path, the trajectory's `agent.name` (harbor's export writes it in each row's `agent`) and
its `extra.rsr.harness`, which `rsr ingest` reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsr_core.formats.atif_write import trajectory_document
from rsr_core.harness import HARNESSES
from rsr_core.models import Trajectory

ID_NAMESPACE = uuid.UUID("4f0d5a52-8c1e-5b7a-9d0e-2a6c3b1f7e10")
"""Namespace of the UUIDs derived from our trajectory ids and job names (uuid5)."""
_MAX_HASHED_FILE = 64 * 1024 * 1024
HARBOR_AGENT = "terminus-2"
"""harbor's agent whose protocol all our harnesses speak (and the harness of ours harbor knows by name)."""


def harbor_id(name: str) -> str:
    """The UUID harbor's models want, derived from one of our ids."""
    return str(uuid.uuid5(ID_NAMESPACE, name))


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time (naive ones taken as UTC), or None for anything harbor could not read."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def task_checksum(task_name: str, task_dir: Path | None) -> str:
    """SHA-256 over the task directory's regular files (relative path and content, in path order; links are
    not followed); over the task name when the directory is not at hand."""
    digest = hashlib.sha256()
    if task_dir is None or not task_dir.is_dir():
        digest.update(f"task-name:{task_name}".encode())
        return digest.hexdigest()
    files = []
    for folder, dirs, names in os.walk(task_dir):
        dirs.sort()
        files += [
            Path(folder) / n
            for n in names
            if (Path(folder) / n).is_file() and not os.path.islink(Path(folder) / n)
        ]
    for path in sorted(files, key=lambda p: p.relative_to(task_dir).as_posix()):
        digest.update(path.relative_to(task_dir).as_posix().encode() + b"\0")
        if path.stat().st_size <= _MAX_HASHED_FILE:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def task_reference(task_name: str, task_dir: Path | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(harbor `TaskConfig`, harbor task id) of a task: its directory when known, else an `org/name`
    package, else the name as a local path."""
    if task_dir is not None:
        return {"path": str(task_dir)}, {"path": str(task_dir)}
    if "/" in task_name:
        org, name = task_name.split("/", 1)
        return {"name": task_name}, {"org": org, "name": name, "ref": None}
    return {"path": task_name}, {"path": task_name}


def exception_info(traj: Trajectory) -> dict[str, Any] | None:
    """harbor's `ExceptionInfo` for a run that ended on an error or a bound.

    Our harnesses record `reason` or `reason: detail` (`max_turns`, `resource_limit: …`); a run read from a
    harbor trial keeps harbor's own object as JSON, which is written back as it was."""
    if not traj.exception:
        return None
    occurred = traj.finished_at or traj.started_at
    if parse_time(occurred) is None:
        occurred = datetime.now(UTC).isoformat()
    try:
        given = json.loads(traj.exception)
    except ValueError:
        given = None
    if isinstance(given, dict) and isinstance(given.get("exception_type"), str):
        return {
            "exception_type": given["exception_type"],
            "exception_message": str(given.get("exception_message", "")),
            "exception_traceback": str(given.get("exception_traceback", "")),
            "occurred_at": given.get("occurred_at") if parse_time(given.get("occurred_at")) else occurred,
        }
    reason = traj.exception.split(":", 1)[0].strip()
    return {
        "exception_type": reason if reason.isidentifier() else "RunError",
        "exception_message": traj.exception,
        "exception_traceback": "",
        "occurred_at": occurred,
    }


def agent_reference(traj: Trajectory) -> tuple[dict[str, Any], str]:
    """(harbor `AgentConfig`, `agent_info.name`) of a run. A harness of ours that harbor does not know is named
    by its import path, its `agent_info` by harbor's Terminus 2; a run without steps keeps the harness's own
    name there (no trajectory for harbor's tools to read, and nothing else to tell `rsr ingest` the harness)."""
    harness = HARNESSES.get(traj.harness)
    if harness is None or traj.harness == HARBOR_AGENT:
        return {"name": traj.harness, "model_name": traj.model}, traj.harness
    config = {
        "name": None,
        "import_path": f"{harness.__module__}:{harness.__name__}",
        "model_name": traj.model,
    }
    return config, HARBOR_AGENT if traj.steps else traj.harness


def trial_result(
    job_dir: Path, traj: Trajectory, task_name: str, trial_name: str, task_dir: Path | None = None
) -> dict[str, Any]:
    """A trial's result.json (harbor's `TrialResult`); `job_dir` is where the job lives once written."""
    task_config, task_id = task_reference(task_name, task_dir)
    costs = [s.cost_usd for s in traj.steps if s.cost_usd is not None]
    agent_config, agent_name = agent_reference(traj)
    agent_info: dict[str, Any] = {"name": agent_name, "version": traj.agent_version or "unknown"}
    agent_info["model_info"] = (
        {"name": traj.model, "provider": "scripted" if traj.scripted else "openai"} if traj.model else None
    )
    return {
        "id": harbor_id(traj.trajectory_id),
        "task_name": task_name,
        "trial_name": trial_name,
        "trial_uri": (job_dir / trial_name).resolve().as_uri(),
        "task_id": task_id,
        "task_checksum": task_checksum(task_name, task_dir),
        "config": {
            "task": task_config,
            "trial_name": trial_name,
            "trials_dir": str(job_dir),
            "agent": agent_config,
            "environment": {"type": "docker"},
            "job_id": harbor_id(job_dir.name),
        },
        "agent_info": agent_info,
        "agent_result": {
            "n_input_tokens": sum(s.prompt_tokens or 0 for s in traj.steps),
            "n_output_tokens": sum(s.completion_tokens or 0 for s in traj.steps),
            "cost_usd": sum(costs) if costs else None,
        },
        "verifier_result": {"rewards": {"reward": traj.reward}} if traj.reward is not None else None,
        "exception_info": exception_info(traj),
        "started_at": traj.started_at if parse_time(traj.started_at) else None,
        "finished_at": traj.finished_at if parse_time(traj.finished_at) else None,
    }


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_trial(
    job_dir: Path,
    traj: Trajectory,
    task_name: str,
    trial_name: str,
    task_dir: Path | str | None = None,
    final_dir: Path | None = None,
) -> Path:
    """One trial directory; returns it. `task_dir` (the task's directory, when known) is what the trial's
    config and checksum name; without it the task is named by `task_name`. `final_dir`: where the job dir will
    be once the directory being written (`job_dir`, a temporary name) is moved into place.

    A run without steps gets no agent/trajectory.json (ATIF needs at least one step)."""
    trial = job_dir / trial_name
    task_path = Path(task_dir) if task_dir is not None else None
    result = trial_result(final_dir or job_dir, traj, task_name, trial_name, task_path)
    _write(trial / "config.json", json.dumps(result["config"], indent=2) + "\n")
    _write(trial / "result.json", json.dumps(result, indent=2) + "\n")
    if traj.steps:
        _write(trial / "agent" / "trajectory.json", json.dumps(trajectory_document(traj), indent=2) + "\n")
    if traj.reward is not None:
        _write(trial / "verifier" / "reward.txt", f"{traj.reward:g}\n")
    if traj.verifier_output is not None:
        _write(trial / "verifier" / "test-stdout.txt", traj.verifier_output)
    return trial


def _trial_results(job_dir: Path) -> list[dict[str, Any]]:
    """The trial result.json files written under a job directory, in name order."""
    out = []
    for path in sorted(job_dir.glob("*/result.json")):
        result = json.loads(path.read_text())
        if isinstance(result, dict) and "trial_name" in result:
            out.append(result)
    return out


def job_stats(results: list[dict[str, Any]], n_total: int) -> dict[str, Any]:
    """harbor's `JobStats` of trial results: counts, per-eval rewards, errors and the mean reward (a trial
    without a reward counts 0, as harbor's mean does), token and cost totals."""
    evals: dict[str, dict[str, Any]] = {}
    rewards: dict[str, list[float]] = {}
    errors = 0
    for r in results:
        model = (r["agent_info"].get("model_info") or {}).get("name")
        key = "__".join([r["agent_info"]["name"], *([model] if model else []), "adhoc"])
        stats = evals.setdefault(
            key,
            {
                "n_trials": 0,
                "n_errors": 0,
                "metrics": [],
                "pass_at_k": {},
                "reward_stats": {},
                "exception_stats": {},
            },
        )
        got = (r.get("verifier_result") or {}).get("rewards")
        if got is not None:
            stats["n_trials"] += 1
            for name, value in got.items():
                stats["reward_stats"].setdefault(name, {}).setdefault(value, []).append(r["trial_name"])
        rewards.setdefault(key, []).append(float(got.get("reward", 0)) if got else 0.0)
        if r.get("exception_info"):
            stats["exception_stats"].setdefault(r["exception_info"]["exception_type"], []).append(
                r["trial_name"]
            )
            stats["n_errors"] += 1
            errors += 1
    for key, values in rewards.items():
        evals[key]["metrics"] = [{"mean": sum(values) / len(values)}]
    agent_results = [r.get("agent_result") or {} for r in results]
    costs = [a["cost_usd"] for a in agent_results if a.get("cost_usd") is not None]
    return {
        "n_completed_trials": len(results),
        "n_errored_trials": errors,
        "n_running_trials": 0,
        "n_pending_trials": max(n_total - len(results), 0),
        "n_cancelled_trials": 0,
        "n_retries": 0,
        "evals": evals,
        "n_input_tokens": sum(a.get("n_input_tokens") or 0 for a in agent_results),
        "n_output_tokens": sum(a.get("n_output_tokens") or 0 for a in agent_results),
        "cost_usd": sum(costs) if costs else None,
    }


def write_job_result(job_dir: Path, trials: list[Trajectory], final_dir: Path | None = None) -> None:
    """The job's result.json (harbor's `JobResult`), from the trial result.json files written under it;
    `trials` are the runs the job set out to write (its total); `final_dir` as for `write_trial`."""
    results = _trial_results(job_dir)
    starts = [t for r in results if (t := parse_time(r.get("started_at")))]
    ends = [t for r in results if (t := parse_time(r.get("finished_at")))]
    started = min(starts) if starts else datetime.now(UTC)
    finished = max(ends) if ends else started
    job = {
        "id": harbor_id((final_dir or job_dir).name),
        "started_at": started.isoformat(),
        "updated_at": finished.isoformat(),
        "finished_at": finished.isoformat(),
        "n_total_trials": max(len(trials), len(results)),
        "stats": job_stats(results, max(len(trials), len(results))),
    }
    _write(job_dir / "result.json", json.dumps(job, indent=2) + "\n")
