"""Harbor trial directories: result.json + agent/trajectory.json + verifier/ -> Trajectory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rsr_core.formats.atif_read import carried_hash, parse_atif
from rsr_core.formats.control import canonical_harness, task_id_of
from rsr_core.formats.reading import FormatError, expect, sha256, timestamp_text
from rsr_core.formats.rewards import checked_reward, reward_from_text, reward_of_mapping
from rsr_core.ingest.fs import present, read_json, read_text
from rsr_core.models import Trajectory, as_kind


def is_trial_result(obj: Any) -> bool:
    """A harbor trial's result.json (as opposed to a job's)."""
    return isinstance(obj, dict) and "task_name" in obj and "trial_name" in obj


def _reward_from_files(verifier: Path, root: Path) -> tuple[float | None, str | None]:
    """The reward a verifier wrote (`reward.txt`, else `reward.json`) and, when it names none, why."""
    txt = verifier / "reward.txt"
    if present(txt):
        return reward_from_text(read_text(txt, root, "verifier/reward.txt"), "verifier/reward.txt"), None
    js = verifier / "reward.json"
    if present(js):
        obj, _ = read_json(js, root, "verifier/reward.json")
        if isinstance(obj, int | float) and not isinstance(obj, bool):
            return checked_reward(obj, "verifier/reward.json"), None
        expect(isinstance(obj, dict), "verifier/reward.json", "an object of rewards or a number", obj)
        return reward_of_mapping(obj, "verifier/reward.json")
    return None, None


def _result_reward(result: dict) -> tuple[float | None, str | None]:
    """The reward in result.json: `verifier_result.rewards` (the reward-file rules), else a reward directly
    on `verifier_result` (older harbor results)."""
    verifier = result.get("verifier_result")
    if verifier is None:
        return None, None
    expect(isinstance(verifier, dict), "result.json verifier_result", "an object or null", verifier)
    note = None
    rewards = verifier.get("rewards")
    if rewards is not None:
        expect(isinstance(rewards, dict), "result.json verifier_result.rewards", "an object", rewards)
        reward, note = reward_of_mapping(rewards, "result.json verifier_result.rewards")
        if reward is not None:
            return reward, None
    if verifier.get("reward") is not None:
        return checked_reward(verifier["reward"], "result.json verifier_result.reward"), None
    return None, note


def read_trial(
    directory: Path, harness: str | None = None, kind: str | None = None, root: Path | None = None
) -> Trajectory:
    """One harbor trial. `harness`/`kind` from the CLI win over `extra.rsr` and result.json.

    Files are read only where they resolve inside `root` (default: the trial directory)."""
    root = root or directory
    result, _ = read_json(directory / "result.json", root, "result.json", "harbor result.json")
    expect(isinstance(result, dict), "result.json", "an object with task_name and trial_name", result)
    expect(
        isinstance(result.get("task_name"), str), "result.json task_name", "a string", result.get("task_name")
    )
    trial_name = result.get("trial_name")
    expect(isinstance(trial_name, str), "result.json trial_name", "a string", trial_name)
    started_at = timestamp_text(result.get("started_at"), "result.json started_at")
    finished_at = timestamp_text(result.get("finished_at"), "result.json finished_at")
    agent_info = result.get("agent_info") or {}
    expect(isinstance(agent_info, dict), "result.json agent_info", "an object", agent_info)
    model_info = agent_info.get("model_info") or {}
    traj_path = directory / "agent" / "trajectory.json"
    traj_bytes = b""
    rsr: dict = {}
    if present(traj_path):
        doc, traj_bytes = read_json(traj_path, root, "agent/trajectory.json", "ATIF JSON")
        try:
            traj, rsr = parse_atif(doc)
        except FormatError as exc:
            raise FormatError(f"agent/trajectory.json: {exc}") from None
    else:
        traj = Trajectory(trajectory_id=trial_name, steps=[])
    # Every reward present is checked, used or not: a NaN anywhere means the trial's files are not sound.
    result_reward, result_note = _result_reward(result)
    file_reward, file_note = _reward_from_files(directory / "verifier", root)
    reward = rsr.get("reward")
    for candidate in (result_reward, file_reward):
        if reward is None:
            reward = candidate
    test_out = directory / "verifier" / "test-stdout.txt"
    exc_info = result.get("exception_info")
    agent_name = agent_info.get("name") if isinstance(agent_info.get("name"), str) else None
    traj.task_id = task_id_of(rsr.get("task_id") or result["task_name"])
    traj.harness = canonical_harness(
        harness or rsr.get("harness") or agent_name or traj.agent_name or "unknown"
    )
    traj.kind = as_kind(kind or rsr.get("kind") or "discovery")
    traj.reward = float(reward) if reward is not None else None
    traj.agent_name = traj.agent_name or agent_name
    traj.agent_version = traj.agent_version or (
        str(agent_info["version"]) if agent_info.get("version") else None
    )
    model_name = model_info.get("name") if isinstance(model_info, dict) else None
    traj.model = traj.model or (model_name if isinstance(model_name, str) else None)
    traj.started_at = started_at or traj.started_at
    traj.finished_at = finished_at or traj.finished_at
    if "exception" in rsr:  # written by RSR: the stored value, not harbor's rendering of it
        traj.exception = rsr["exception"]
    else:
        traj.exception = json.dumps(exc_info, default=str) if exc_info else None
    traj.verifier_output = (
        read_text(test_out, root, "verifier/test-stdout.txt") if present(test_out) else None
    )
    traj.extra = {**traj.extra, "trial_name": trial_name}
    note = result_note or file_note
    if traj.reward is None and note:
        traj.extra["reward_note"] = note
    if isinstance(result.get("agent_result"), dict):
        traj.extra["agent_result"] = result["agent_result"]
    traj.content_hash = carried_hash(rsr) or sha256(
        traj_bytes, result["task_name"], trial_name, repr(traj.reward)
    )
    return traj
