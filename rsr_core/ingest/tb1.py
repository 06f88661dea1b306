"""Terminal-Bench 1 trials: results.json + agent-logs/episode-N/{prompt.txt, response.txt} -> Trajectory.

The first step is a user step holding the first episode's prompt (what the model saw first: the instruction
and the terminal state), then one agent step per episode: the agent's response (Terminus JSON) with the
terminal output that the next episode's prompt showed as its observation.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from rsr_core.formats.atif_read import MAX_STEPS
from rsr_core.formats.control import canonical_harness, task_id_of
from rsr_core.formats.reading import FormatError, expect, sha256, timestamp_text
from rsr_core.formats.terminus import parse_lenient
from rsr_core.formats.thinking import split_thinking
from rsr_core.ingest.fs import inside, present, read_json, read_text, real
from rsr_core.models import Step, Trajectory

_EPISODE = re.compile(r"^episode-(\d+)$")
# Where the instruction sits in the prompt templates of Terminal-Bench's Terminus agents (start, end): an
# instruction is taken from a prompt only when exactly one template's markers each occur exactly once.
PROMPT_LAYOUTS = (
    ("\nInstruction:\n", "\n\nYour response must be a JSON object"),  # Terminus 1, terminus.txt
    ("\nTask Description:\n", "\n\nCurrent terminal state:"),  # Terminus 2, terminus-json-plain.txt
)


def is_trial_results(obj: Any) -> bool:
    """A TB1 trial's results.json (a run's results.json holds a `results` list instead)."""
    return isinstance(obj, dict) and "task_id" in obj and "trial_name" in obj


def instruction_from_prompt(prompt: str) -> str | None:
    """The task instruction inside a Terminus prompt, when the template's markers make it unambiguous."""
    text = "\n" + prompt
    found = []
    for start, end in PROMPT_LAYOUTS:
        if text.count(start) == 1 and text.count(end) == 1:
            begin, stop = text.index(start) + len(start), text.index(end)
            if begin < stop and text[begin:stop].strip():
                found.append(text[begin:stop].strip())
    return found[0] if len(found) == 1 else None


def _run_metadata(trial_dir: Path) -> dict:
    for parent in (trial_dir.parent.parent, trial_dir.parent):
        meta = parent / "run_metadata.json"
        if os.path.isfile(meta):
            try:
                obj, _ = read_json(meta, parent, "run_metadata.json")
            except (FormatError, OSError):
                return {}  # the run's metadata only adds agent and model names
            return obj if isinstance(obj, dict) else {}
    return {}


def _episodes(trial_dir: Path, root: Path) -> list[tuple[int, Path]]:
    logs = trial_dir / "agent-logs"
    found: list[tuple[int, Path]] = []
    if not logs.is_dir():
        return found
    if not inside(real(logs), real(root)):
        raise FormatError(f"agent-logs: symlink to {real(logs)} leaves {root}; not read")
    for child in logs.iterdir():
        match = _EPISODE.match(child.name)
        if match and child.is_dir():
            found.append((int(match.group(1)), child))
            if len(found) > MAX_STEPS:
                raise FormatError(
                    f"agent-logs: more than {MAX_STEPS:,} episodes, the limit for one trajectory; not read"
                )
    return sorted(found)


MISSING_RESPONSE = "missing_response"
"""Step `extra` key set (to true) on the agent step of an episode whose response file was never written (an
agent stopped mid-episode): its message is empty because nothing was recorded, not because the model said
nothing; `extra["note"]` says which file is missing."""


def _episode_texts(trial_dir: Path, root: Path) -> list[tuple[str | None, str | None, str]]:
    """(response or None when no response file exists, prompt, the episode's folder) of every episode in
    order."""
    texts = []
    for n, ep in _episodes(trial_dir, root):
        response = ep / "response.txt"
        if not present(response) and present(ep / "response.json"):
            response = ep / "response.json"
        prompt = ep / "prompt.txt"
        where = f"agent-logs/episode-{n}"
        resp_text = read_text(response, root, f"{where}/{response.name}") if present(response) else None
        prompt_text = read_text(prompt, root, f"{where}/prompt.txt") if present(prompt) else None
        texts.append((resp_text, prompt_text, where))
    return texts


def _agent_step(index: int, response: str | None, observation: str | None, where: str) -> Step:
    if response is None:
        return Step(
            index=index,
            source="agent",
            observation=observation,
            extra={
                MISSING_RESPONSE: True,
                "note": f"{where}/response.txt is missing: no response was recorded",
            },
        )
    thinking, answer = split_thinking(response)  # a reasoning model's response file starts with its thinking
    parsed = parse_lenient(answer)
    return Step(
        index=index,
        source="agent",
        message=answer,
        reasoning=thinking,
        analysis=parsed.analysis if parsed else None,
        plan=parsed.plan if parsed else None,
        commands=parsed.commands if parsed else [],
        observation=observation,
        task_complete=parsed.task_complete if parsed else False,
    )


def read_tb1_trial(
    directory: Path, harness: str | None = None, kind: str | None = None, root: Path | None = None
) -> Trajectory:
    """One Terminal-Bench 1 trial directory; files are read only where they resolve inside `root` (default:
    the trial directory).

    The instruction comes from results.json, else from the first prompt when its template makes it
    unambiguous (`extra.instruction_source` says which); the ingest may still fill it from a known task.
    """
    root = root or directory
    result, raw = read_json(directory / "results.json", root, "results.json", "Terminal-Bench results.json")
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
    times = {
        key: timestamp_text(result.get(key), f"results.json {key}")
        for key in ("trial_started_at", "trial_ended_at", "agent_started_at", "agent_ended_at")
    }
    meta = _run_metadata(directory)
    texts = _episode_texts(directory, root)
    hash_parts: list[bytes | str] = [raw]
    for resp_text, prompt_text, _ in texts:
        hash_parts += [resp_text or "", prompt_text or ""]
    first_prompt = texts[0][1] if texts else None
    steps = []
    if first_prompt is not None:
        steps.append(Step(index=1, source="user", message=first_prompt))
    for i, (resp_text, _, where) in enumerate(texts):
        observation = texts[i + 1][1] if i + 1 < len(texts) else None
        steps.append(_agent_step(len(steps) + 1, resp_text, observation, where))
    instruction, instruction_source = _instruction(result, first_prompt)
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
        instruction=instruction,
        started_at=times["trial_started_at"] or times["agent_started_at"],
        finished_at=times["trial_ended_at"] or times["agent_ended_at"],
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
        }
        | ({"instruction_source": instruction_source} if instruction_source else {}),
    )


def _instruction(result: dict, first_prompt: str | None) -> tuple[str | None, str | None]:
    """(instruction, where it came from: results.json or prompt)."""
    given = result.get("instruction")
    if isinstance(given, str) and given.strip():
        return given, "results.json"
    extracted = instruction_from_prompt(first_prompt) if first_prompt else None
    return (extracted, "prompt") if extracted else (None, None)
