"""Agent turns made of tool calls (a `Bash` tool, a `delegate` tool, MCP tools: anything but Terminus'
`bash_command`), in the chat convention trainers expect: the assistant message carries `tool_calls` (OpenAI's
shape: id, type "function", function {name, arguments as a JSON string}) and each result follows as a `tool`
message with its `tool_call_id`; the row's tool list is a JSON string.

The ATIF reader keeps a step's tool calls and observation as written (`extra._atif`) whenever they are not
Terminus' own, so they are read from there; a step that has only stored commands of a named tool gets its calls
back from them. Media (content parts that are not text) cannot be written as text: such a run makes no row.
"""

from __future__ import annotations

import json
from typing import Any

from rsr_core.models import Command, Step, Trajectory

TERMINUS_TOOLS = frozenset({"bash_command", "mark_task_complete", "task_complete"})
"""The calls Terminus' answers are written as in ATIF: a turn made only of them is a Terminus answer."""
MULTIMODAL = "multimodal"
"""Why a run makes no row: it holds media (an image, audio) that a text row cannot carry."""

ToolCall = dict[str, Any]


def canonical_tool_calls(step_id: int, source: str, commands: list[Command], complete: bool) -> list[dict]:
    """The tool calls the ATIF export writes for a step's stored commands: `call_<step>_<n>` ids, the
    command's function with `{keystrokes, duration}`, and a `mark_task_complete` call for an agent's
    completion claim. Only agent steps carry tool calls in ATIF."""
    if source != "agent":
        return []
    calls: list[dict] = [
        {
            "tool_call_id": f"call_{step_id}_{i}",
            "function_name": c.function_name,
            "arguments": {"keystrokes": c.keystrokes, "duration": c.duration},
        }
        for i, c in enumerate(commands, 1)
    ]
    if complete:
        calls.append(
            {"tool_call_id": f"call_{step_id}_done", "function_name": "mark_task_complete", "arguments": {}}
        )
    return calls


_CALL_KEYS = ["tool_call_id", "function_name", "arguments"]
STORED_IDS = "ids"
"""The stored form of kept tool calls that are the canonical calls under other ids (harbor's Terminus 2 numbers
its calls by episode): `{"ids": [...]}` in place of the list, the calls rebuilt from the stored commands."""


def _other_ids(calls: Any, written: list[dict]) -> list[str] | None:
    """The ids of `calls` when they are `written` in all but their ids, key order and value types included
    (so that the calls rebuilt from the ids are the ones kept); else None."""
    if not isinstance(calls, list) or len(calls) != len(written):
        return None
    ids = []
    for call, canonical in zip(calls, written, strict=True):
        if not isinstance(call, dict) or list(call) != _CALL_KEYS:
            return None
        call_id, args = call["tool_call_id"], call["arguments"]
        canonical_args = canonical["arguments"]
        if (
            type(call_id) is not str
            or call["function_name"] != canonical["function_name"]
            or type(args) is not dict
            or list(args) != list(canonical_args)
            or args != canonical_args
            or ("duration" in args and type(args["duration"]) is not float)
            or ("keystrokes" in args and type(args["keystrokes"]) is not str)
        ):
            return None
        ids.append(call_id)
    return ids


def stored_extra(step: Step) -> dict[str, Any]:
    """The step's `extra` as the store keeps it: kept tool calls that are the canonical calls under other ids
    as their ids alone (`STORED_IDS`); `read_extra` turns it back."""
    extra = step.extra
    kept = extra.get("_atif") if extra else None
    if not isinstance(kept, dict) or "tool_calls" not in kept:
        return extra
    written = canonical_tool_calls(step.index, step.source, step.commands, step.task_complete)
    ids = _other_ids(kept["tool_calls"], written)
    if ids is None:
        return extra
    return {**extra, "_atif": {**kept, "tool_calls": {STORED_IDS: ids}}}


def read_extra(
    extra: dict[str, Any], index: int, source: str, commands: list[Command], complete: bool
) -> dict[str, Any]:
    """A stored step `extra` as the model holds it (the inverse of `stored_extra`). Ids that are not one for
    each call (a row changed by hand) leave the calls their canonical ids."""
    kept = extra.get("_atif")
    if not isinstance(kept, dict) or not isinstance(kept.get("tool_calls"), dict):
        return extra
    stored = kept["tool_calls"]
    ids = stored.get(STORED_IDS)
    calls = canonical_tool_calls(index, source, commands, complete)
    if isinstance(ids, list) and len(ids) == len(calls):
        for call, call_id in zip(calls, ids, strict=True):
            call["tool_call_id"] = call_id
    return {**extra, "_atif": {**kept, "tool_calls": calls}}


def _kept(step: Step) -> dict[str, Any]:
    kept = step.extra.get("_atif")
    return kept if isinstance(kept, dict) else {}


def recorded_calls(step: Step) -> list[dict[str, Any]]:
    """The step's ATIF tool calls as written ({tool_call_id, function_name, arguments}), else as its stored
    commands imply them."""
    calls = _kept(step).get("tool_calls")
    if isinstance(calls, list):
        return [c for c in calls if isinstance(c, dict) and isinstance(c.get("function_name"), str)]
    return canonical_tool_calls(step.index, step.source, step.commands, False)


def uses_tools(step: Step) -> bool:
    """Is this agent turn made of tool calls other than Terminus' own?"""
    if step.source != "agent":
        return False
    calls = _kept(step).get("tool_calls")
    if isinstance(calls, list):
        return any(isinstance(c, dict) and c.get("function_name") not in TERMINUS_TOOLS for c in calls)
    return any(c.function_name not in TERMINUS_TOOLS for c in step.commands)


def _arguments(value: Any) -> str:
    """OpenAI's `arguments`: the JSON text of the call's arguments object."""
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def tool_calls(step: Step) -> list[ToolCall]:
    """The turn's calls in OpenAI's shape."""
    return [
        {
            "id": str(c.get("tool_call_id") or f"call_{step.index}_{n}"),
            "type": "function",
            "function": {"name": c["function_name"], "arguments": _arguments(c.get("arguments"))},
        }
        for n, c in enumerate(recorded_calls(step), 1)
    ]


def _result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p if isinstance(p, str) else str(p.get("text", "")) for p in content if isinstance(p, str | dict)
        )
    # a delegated call answered by a subagent's trajectory: the reference is what the result holds
    rest = {k: v for k, v in result.items() if k not in ("source_call_id", "content")}
    return json.dumps(rest, ensure_ascii=False, sort_keys=True) if rest else ""


def tool_results(step: Step, calls: list[ToolCall]) -> tuple[list[tuple[str, str]], str]:
    """([(tool_call_id, text)] of the results tied to the turn's calls, in the order written; the text of the
    results tied to none (the terminal's own output), blank-line joined)."""
    ids = {c["id"] for c in calls}
    observation = _kept(step).get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    if not isinstance(results, list):
        # the reader keeps no observation it can write back the same: one result, tied to the first call
        text = step.observation or ""
        if calls and step.observation is not None:
            return [(calls[0]["id"], text)], ""
        return [], text
    tied: list[tuple[str, str]] = []
    loose: list[str] = []
    for result in results:
        if not isinstance(result, dict):
            continue
        text = _result_text(result)
        call_id = result.get("source_call_id")
        if isinstance(call_id, str) and call_id in ids:
            tied.append((call_id, text))
        elif text.strip():
            loose.append(text)
    return tied, "\n\n".join(loose)


def _has_media(value: Any) -> bool:
    """Does this ATIF text value (a string or content parts) hold a part that is not text?"""
    if not isinstance(value, list):
        return False
    return any(isinstance(p, dict) and p.get("type") not in (None, "text") for p in value)


def has_media(step: Step) -> bool:
    """Does the step's message or observation, as written, hold an image, audio or other non-text part?"""
    kept = _kept(step)
    if _has_media(kept.get("message")):
        return True
    observation = kept.get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    return isinstance(results, list) and any(
        isinstance(r, dict) and _has_media(r.get("content")) for r in results
    )


def tool_list(trajectory: Trajectory, names: list[str]) -> str:
    """The row's `tools` (a JSON string): the agent's ATIF `tool_definitions` when it recorded them (OpenAI
    function definitions), else one function per tool name the calls used, with arguments of any shape."""
    kept = trajectory.extra.get("_atif")
    agent = kept.get("agent") if isinstance(kept, dict) else None
    defined = agent.get("tool_definitions") if isinstance(agent, dict) else None
    if isinstance(defined, list) and defined:
        return json.dumps(defined, ensure_ascii=False)
    if not names:
        return "[]"
    derived = [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        for name in dict.fromkeys(names)
    ]
    return json.dumps(derived, ensure_ascii=False)
