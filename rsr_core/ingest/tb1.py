"""Terminal-Bench 1 trials: results.json + agent-logs/episode-N/{prompt.txt, response.txt} -> Trajectory.

One step per episode: the agent's response (Terminus JSON) with the terminal output that the next
episode's prompt showed as its observation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rsr_core.harness.protocol import parse_lenient
from rsr_core.ingest.control import canonical_harness, task_id_of
from rsr_core.ingest.reading import FormatError, expect, parse_json_bytes, read_json, read_text, sha256
from rsr_core.models import Step, Trajectory

_EPISODE = re.compile(r"^episode-(\d+)$")


def is_trial_results(obj: Any) -> bool:
    """A TB1 trial's results.json (a run's results.json holds a `results` list instead)."""
    return isinstance(obj, dict) and "task_id" in obj and "trial_name" in obj


def _run_metadata(trial_dir: Path) -> dict:
    for parent in (trial_dir.parent.parent, trial_dir.parent):
        meta = parent / "run_metadata.json"
        if meta.is_file():
            try:
                obj, _ = read_json(meta)
            except FormatError:
                return {}
            return obj if isinstance(obj, dict) else {}
    return {}


def _episodes(trial_dir: Path) -> list[tuple[int, Path]]:
    logs = trial_dir / "agent-logs"
    found = []
    if logs.is_dir():
        for child in logs.iterdir():
            match = _EPISODE.match(child.name)
            if match and child.is_dir():
                found.append((int(match.group(1)), child))
    return sorted(found)


def read_tb1_trial(directory: Path, harness: str | None = None, kind: str | None = None) -> Trajectory:
    """One Terminal-Bench 1 trial directory."""
    raw = (directory / "results.json").read_bytes()
    try:
        result = parse_json_bytes(raw, "Terminal-Bench results.json")
    except FormatError as exc:
        raise FormatError(f"results.json: {exc}") from None
    expect(isinstance(result, dict), "results.json", "an object with task_id and trial_name", result)
    expect(isinstance(result.get("task_id"), str), "results.json task_id", "a string", result.get("task_id"))
    expect(
        isinstance(result.get("trial_name"), str),
        "results.json trial_name",
        "a string",
        result.get("trial_name"),
    )
    resolved = result.get("is_resolved")
    expect(
        resolved is None or isinstance(resolved, bool),
        "results.json is_resolved",
        "true, false or null",
        resolved,
    )
    meta = _run_metadata(directory)
    episodes = _episodes(directory)
    texts: list[tuple[str, str | None]] = []
    hash_parts: list[bytes | str] = [raw]
    for n, ep in episodes:
        response = ep / "response.txt"
        if not response.is_file() and (ep / "response.json").is_file():
            response = ep / "response.json"
        prompt = ep / "prompt.txt"
        try:
            resp_text = read_text(response) if response.is_file() else ""
            prompt_text = read_text(prompt) if prompt.is_file() else None
        except FormatError as exc:
            raise FormatError(f"agent-logs/episode-{n}: {exc}") from None
        texts.append((resp_text, prompt_text))
        hash_parts += [resp_text, prompt_text or ""]
    steps = []
    for i, (resp_text, _) in enumerate(texts):
        parsed = parse_lenient(resp_text)
        observation = texts[i + 1][1] if i + 1 < len(texts) else None
        steps.append(
            Step(
                index=i + 1,
                source="agent",
                message=resp_text,
                analysis=parsed.analysis if parsed else None,
                plan=parsed.plan if parsed else None,
                commands=parsed.commands if parsed else [],
                observation=observation,
                task_complete=parsed.task_complete if parsed else False,
            )
        )
    agent_name = meta.get("agent_name") if isinstance(meta.get("agent_name"), str) else None
    reward = None if resolved is None else (1.0 if resolved else 0.0)
    return Trajectory(
        trajectory_id=result["trial_name"],
        task_id=task_id_of(result["task_id"]),
        kind=kind or "discovery",
        harness=canonical_harness(harness or agent_name or "terminus"),
        agent_name=agent_name,
        model=meta.get("model_name") if isinstance(meta.get("model_name"), str) else None,
        reward=reward,
        instruction=result.get("instruction") if isinstance(result.get("instruction"), str) else None,
        started_at=result.get("trial_started_at") or result.get("agent_started_at"),
        finished_at=result.get("trial_ended_at") or result.get("agent_ended_at"),
        exception=result.get("failure_mode")
        if result.get("failure_mode") not in (None, "none", "unset")
        else None,
        origin=str(directory),
        content_hash=sha256(*hash_parts),
        steps=steps,
        extra={
            k: result[k]
            for k in ("failure_mode", "parser_results", "total_input_tokens", "total_output_tokens", "run_id")
            if result.get(k) is not None
        },
    )
