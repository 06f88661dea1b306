"""Harbor trial directories: result.json + agent/trajectory.json + verifier/ -> Trajectory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rsr_core.ingest.atif import carried_hash, parse_atif
from rsr_core.ingest.control import canonical_harness, task_id_of
from rsr_core.ingest.reading import FormatError, expect, parse_json_bytes, read_json, read_text, sha256
from rsr_core.models import Trajectory


def is_trial_result(obj: Any) -> bool:
    """A harbor trial's result.json (as opposed to a job's)."""
    return isinstance(obj, dict) and "task_name" in obj and "trial_name" in obj


def _reward_from_files(verifier: Path) -> float | None:
    txt = verifier / "reward.txt"
    if txt.is_file():
        text = read_text(txt).strip()
        try:
            return float(text)
        except ValueError:
            raise FormatError(f"verifier/reward.txt: expected a number, got {text[:40]!r}") from None
    js = verifier / "reward.json"
    if js.is_file():
        obj, _ = read_json(js)
        if isinstance(obj, int | float) and not isinstance(obj, bool):
            return float(obj)
        expect(isinstance(obj, dict), "verifier/reward.json", "an object with a numeric 'reward'", obj)
        value = obj.get("reward")
        if value is None and len(obj) == 1:
            value = next(iter(obj.values()))
        expect(
            isinstance(value, int | float) and not isinstance(value, bool),
            "verifier/reward.json reward",
            "a number",
            value,
        )
        return float(value)
    return None


def _result_reward(result: dict) -> float | None:
    verifier = result.get("verifier_result")
    if not isinstance(verifier, dict):
        return None
    rewards = verifier.get("rewards")
    if isinstance(rewards, dict) and rewards.get("reward") is not None:
        value = rewards["reward"]
        expect(
            isinstance(value, int | float) and not isinstance(value, bool),
            "result.json verifier_result.rewards.reward",
            "a number",
            value,
        )
        return float(value)
    if isinstance(verifier.get("reward"), int | float) and not isinstance(verifier.get("reward"), bool):
        return float(verifier["reward"])  # older harbor results put the reward directly on verifier_result
    return None


def read_trial(directory: Path, harness: str | None = None, kind: str | None = None) -> Trajectory:
    """One harbor trial. `harness`/`kind` from the CLI win over `extra.rsr` and result.json."""
    result_bytes = (directory / "result.json").read_bytes()
    try:
        result = parse_json_bytes(result_bytes, "harbor result.json")
    except FormatError as exc:
        raise FormatError(f"result.json: {exc}") from None
    expect(isinstance(result, dict), "result.json", "an object with task_name and trial_name", result)
    expect(
        isinstance(result.get("task_name"), str), "result.json task_name", "a string", result.get("task_name")
    )
    trial_name = result.get("trial_name")
    expect(isinstance(trial_name, str), "result.json trial_name", "a string", trial_name)
    agent_info = result.get("agent_info") or {}
    expect(isinstance(agent_info, dict), "result.json agent_info", "an object", agent_info)
    model_info = agent_info.get("model_info") or {}
    traj_path = directory / "agent" / "trajectory.json"
    traj_bytes = b""
    rsr: dict = {}
    if traj_path.is_file():
        traj_bytes = traj_path.read_bytes()
        try:
            traj, rsr = parse_atif(parse_json_bytes(traj_bytes, "ATIF JSON"))
        except FormatError as exc:
            raise FormatError(f"agent/trajectory.json: {exc}") from None
    else:
        traj = Trajectory(trajectory_id=trial_name, steps=[])
    reward = rsr.get("reward")
    if reward is None:
        reward = _result_reward(result)
    if reward is None:
        reward = _reward_from_files(directory / "verifier")
    test_out = directory / "verifier" / "test-stdout.txt"
    exc_info = result.get("exception_info")
    agent_name = agent_info.get("name") if isinstance(agent_info.get("name"), str) else None
    traj.task_id = task_id_of(rsr.get("task_id") or result["task_name"])
    traj.harness = canonical_harness(
        harness or rsr.get("harness") or agent_name or traj.agent_name or "unknown"
    )
    traj.kind = kind or rsr.get("kind") or "discovery"
    traj.reward = float(reward) if reward is not None else None
    traj.agent_name = traj.agent_name or agent_name
    traj.agent_version = traj.agent_version or (
        str(agent_info["version"]) if agent_info.get("version") else None
    )
    traj.model = traj.model or (model_info.get("name") if isinstance(model_info, dict) else None)
    traj.started_at = result.get("started_at") or traj.started_at
    traj.finished_at = result.get("finished_at") or traj.finished_at
    traj.exception = json.dumps(exc_info, default=str) if exc_info else None
    traj.verifier_output = read_text(test_out) if test_out.is_file() else None
    traj.extra = {**traj.extra, "trial_name": trial_name}
    if isinstance(result.get("agent_result"), dict):
        traj.extra["agent_result"] = result["agent_result"]
    traj.content_hash = carried_hash(rsr) or sha256(
        traj_bytes, result["task_name"], trial_name, repr(traj.reward)
    )
    return traj
