"""Writing runs in the harbor job layout: <job>/result.json, <job>/<trial>/{result.json, agent/trajectory.json,
verifier/reward.txt, verifier/test-stdout.txt}."""

from __future__ import annotations

import json
from pathlib import Path

from rsr_core.export.atif import trajectory_document
from rsr_core.models import Trajectory


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_trial(job_dir: Path, traj: Trajectory, task_name: str, trial_name: str) -> Path:
    """One trial directory; returns it."""
    trial = job_dir / trial_name
    prompt = sum(s.prompt_tokens or 0 for s in traj.steps)
    completion = sum(s.completion_tokens or 0 for s in traj.steps)
    result = {
        "id": traj.trajectory_id,
        "task_name": task_name,
        "trial_name": trial_name,
        "agent_info": {
            "name": traj.harness,
            "version": traj.agent_version,
            "model_info": {"name": traj.model, "provider": "scripted" if traj.scripted else "openai"},
        },
        "agent_result": {"n_input_tokens": prompt, "n_output_tokens": completion, "cost_usd": None},
        "verifier_result": {"rewards": {"reward": traj.reward}} if traj.reward is not None else None,
        "exception_info": {"exception_message": traj.exception} if traj.exception else None,
        "started_at": traj.started_at,
        "finished_at": traj.finished_at,
    }
    _write(trial / "result.json", json.dumps(result, indent=2) + "\n")
    _write(trial / "agent" / "trajectory.json", json.dumps(trajectory_document(traj), indent=2) + "\n")
    if traj.reward is not None:
        _write(trial / "verifier" / "reward.txt", f"{traj.reward:g}\n")
    if traj.verifier_output is not None:
        _write(trial / "verifier" / "test-stdout.txt", traj.verifier_output)
    return trial


def write_job_result(job_dir: Path, trials: list[Trajectory]) -> None:
    """The job-level summary."""
    solved = sum(1 for t in trials if (t.reward or 0) >= 1.0)
    _write(
        job_dir / "result.json",
        json.dumps(
            {
                "id": job_dir.name,
                "n_total_trials": len(trials),
                "stats": {
                    "n_trials": len(trials),
                    "n_solved": solved,
                    "n_errors": sum(1 for t in trials if t.exception),
                },
            },
            indent=2,
        )
        + "\n",
    )
