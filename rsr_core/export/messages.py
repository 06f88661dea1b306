"""Training messages: the general-harness (Terminus 2) conversation a model sees at inference.

System/user prompt (instruction and initial terminal state), then assistant turns as Terminus 2 JSON and user
turns as the observations that followed them. Runbooks (private guidance), harness-control steps and RSR
provenance never appear in messages.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rsr_core.models import Step, Trajectory

SHAREGPT_ROLES = {"system": "system", "user": "human", "assistant": "gpt"}
ROW_COLUMNS = (
    "task_id",
    "trajectory_id",
    "source_trajectory_id",
    "runbook_id",
    "reward",
    "kind",
    "harness",
    "model",
)


def removed_from_training(step: Step) -> bool:
    """Steps that never train: a runbook given as private guidance, or a message a harness injected."""
    return step.private_guidance or step.harness_control


def training_steps(steps: list[Step]) -> list[Step]:
    """The steps that make the training conversation, in order.

    Private-guidance and harness-control steps are removed. So is an agent turn without commands that would
    directly follow another assistant turn when it only answered a removed harness message, or repeated the
    completion claim (Terminus 2 asks "are you sure?" and wants task_complete twice): it adds nothing, and
    left in it would make two assistant turns in a row.
    """
    out: list[Step] = []
    removed = False
    for step in steps:
        if removed_from_training(step):
            removed = True
            continue
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.source == "agent"
            and prev.observation is None
            and step.source == "agent"
            and not step.commands
            and (removed or (prev.task_complete and step.task_complete))
        ):
            continue
        out.append(step)
        removed = False
    return out


def assistant_content(step: Step) -> str:
    """An agent turn as the Terminus 2 JSON answer {"analysis", "plan", "commands", "task_complete"}.

    A turn that is not a Terminus answer (nothing could be read from it) is kept verbatim."""
    if step.analysis is None and step.plan is None:
        if not step.commands and not step.task_complete:
            return step.message
        analysis, plan = step.message, ""
    else:
        analysis, plan = step.analysis or "", step.plan or ""
    return terminus_json(
        analysis, plan, [(c.keystrokes, c.duration) for c in step.commands], step.task_complete
    )


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def terminus_json(analysis: str, plan: str, commands: list[tuple[str, float]], task_complete: bool) -> str:
    """The answer object laid out as `json.dumps(..., indent=2)` would (built directly: that path is slow)."""
    if commands:
        items = ",\n".join(
            f'    {{\n      "keystrokes": {_dumps(k)},\n      "duration": {_dumps(d)}\n    }}'
            for k, d in commands
        )
        cmds = f"[\n{items}\n  ]"
    else:
        cmds = "[]"
    return (
        f'{{\n  "analysis": {_dumps(analysis)},\n  "plan": {_dumps(plan)},\n  "commands": {cmds},\n'
        f'  "task_complete": {_dumps(task_complete)}\n}}'
    )


def sft_messages(trajectory: Trajectory) -> list[dict[str, str]]:
    """Chat messages [{role, content}]; consecutive system or user turns are joined into one."""
    messages: list[dict[str, str]] = []

    def add(role: str, content: str) -> None:
        if messages and role != "assistant" and messages[-1]["role"] == role:
            messages[-1]["content"] += "\n\n" + content
        else:
            messages.append({"role": role, "content": content})

    for step in training_steps(trajectory.steps):
        if step.source == "agent":
            add("assistant", assistant_content(step))
            if step.observation is not None:
                add("user", step.observation)
        else:
            add(step.source, step.message)
    return messages


def sharegpt_conversation(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The same turns as ShareGPT [{from: system|human|gpt, value}]."""
    return [{"from": SHAREGPT_ROLES[m["role"]], "value": m["content"]} for m in messages]


def row_metadata(trajectory: Trajectory) -> dict[str, Any]:
    """The columns every exported row carries outside its messages."""
    return {name: getattr(trajectory, name) for name in ROW_COLUMNS}


def messages_key(messages: list[dict[str, str]]) -> bytes:
    """Identity of a training conversation: rows with the same key are exact duplicates."""
    raw = json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.blake2b(raw, digest_size=16).digest()
