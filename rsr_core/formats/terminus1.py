"""Terminal-Bench's Terminus 1 answer format (CommandBatchResponse: state_analysis, explanation, commands of
{keystrokes, is_blocking, timeout_sec}, is_task_complete): recognising it and writing it. Apart from the Terminus 2
protocol (terminus.py) because the training rules the store keeps use it."""

from __future__ import annotations

import json

from rsr_core.models import Command

TERMINUS1_KEYS = ("state_analysis", "explanation", "commands", "is_task_complete")
TERMINUS1_COMMAND_KEYS = ("keystrokes", "is_blocking", "timeout_sec")
TERMINUS1_HARNESSES = frozenset({"terminus-1", "terminus1", "terminus_1"})
_TERMINUS1_PROMPT = ("Your response must be a JSON object that matches this schema", '"is_task_complete"')
"""Markers of Terminal-Bench's Terminus 1 prompt (terminus.txt): its answer schema, CommandBatchResponse."""


def is_terminus1_prompt(text: str) -> bool:
    """Does this prompt ask for Terminus 1's answer (CommandBatchResponse) rather than Terminus 2's?"""
    head = text[:20_000]
    return all(marker in head for marker in _TERMINUS1_PROMPT)


def is_terminus1_answer(text: str) -> bool:
    """Is this text one JSON object valid against Terminus 1's CommandBatchResponse schema (every field required,
    no other field, commands of exactly {keystrokes, is_blocking, timeout_sec})?"""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict) or set(obj) != set(TERMINUS1_KEYS):
        return False
    if not (isinstance(obj["state_analysis"], str) and isinstance(obj["explanation"], str)):
        return False
    if not isinstance(obj["is_task_complete"], bool) or not isinstance(obj["commands"], list):
        return False
    for item in obj["commands"]:
        if not isinstance(item, dict) or set(item) != set(TERMINUS1_COMMAND_KEYS):
            return False
        timeout = item["timeout_sec"]
        if not isinstance(item["keystrokes"], str) or not isinstance(item["is_blocking"], bool):
            return False
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            return False
    return True


def terminus1_json(analysis: str, plan: str, commands: list[Command], task_complete: bool) -> str:
    """A Terminus 1 answer (CommandBatchResponse) from an answer's parts. Terminus 1 waits `timeout_sec` after a
    command that does not block, which is what Terminus 2's `duration` means, so a command is written as not
    blocking with its duration; a recorded Terminus 1 answer is kept as written instead (`is_terminus1_answer`)."""
    obj = {
        "state_analysis": analysis,
        "explanation": plan,
        "commands": [
            {"keystrokes": c.keystrokes, "is_blocking": False, "timeout_sec": c.duration} for c in commands
        ],
        "is_task_complete": task_complete,
    }
    return json.dumps(obj, indent=4, ensure_ascii=False)
