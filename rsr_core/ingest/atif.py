"""ATIF `trajectory.json` (ATIF-v1.0 … ATIF-v1.8) -> Trajectory, with RSR provenance from `extra.rsr`."""

from __future__ import annotations

import json
import re
from typing import Any

from rsr_core.analysis.commands import keystrokes_of_call
from rsr_core.harness.protocol import parse_lenient, split_message
from rsr_core.ingest.control import canonical_harness, is_control_message, task_id_of
from rsr_core.ingest.provenance import STORED_TRAJECTORY_FIELDS, stored_step_values
from rsr_core.ingest.reading import FormatError, construct, expect, preview
from rsr_core.ingest.rewards import checked_reward
from rsr_core.models import KINDS, ChangedPath, Command, Step, Trajectory

SUPPORTED_MINOR = range(0, 9)
_VERSION = re.compile(r"^ATIF-v1\.(\d+)$")
COMPLETE_TOOLS = frozenset({"mark_task_complete", "task_complete", "submit"})
STEP_KEYS = frozenset(
    {
        "step_id",
        "timestamp",
        "source",
        "model_name",
        "message",
        "reasoning_content",
        "tool_calls",
        "observation",
        "metrics",
        "extra",
        "is_copied_context",
    }
)


def is_atif(obj: Any) -> bool:
    """Does this JSON value claim to be an ATIF trajectory?"""
    return isinstance(obj, dict) and str(obj.get("schema_version", "")).startswith("ATIF")


def check_version(obj: dict) -> str:
    """The schema_version, or a FormatError naming the supported ones."""
    version = obj.get("schema_version")
    match = _VERSION.match(version) if isinstance(version, str) else None
    if not match or int(match.group(1)) not in SUPPORTED_MINOR:
        raise FormatError(
            f"schema_version: {preview(version)} is not supported; expected ATIF-v1.0 … ATIF-v1.8"
        )
    return version


def _text(value: Any, where: str) -> str:
    """ATIF text fields are strings or lists of content parts ({type: text, text} / images)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        out = []
        for i, part in enumerate(value):
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                expect(isinstance(part.get("text"), str), f"{where}[{i}].text", "a string", part.get("text"))
                out.append(part["text"])
            elif isinstance(part, dict):
                out.append(f"[{part.get('type', 'part')}]")
            else:
                expect(False, f"{where}[{i}]", "a string or a content part object", part)
        return "\n".join(out)
    expect(False, where, "a string or a list of content parts", value)
    return ""


def _int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    expect(isinstance(value, int) and not isinstance(value, bool), where, "an integer", value)
    return value


def _num(value: Any, where: str) -> float | None:
    if value is None:
        return None
    expect(isinstance(value, int | float) and not isinstance(value, bool), where, "a number", value)
    return float(value)


# Parsing runs once per step of every ingested file, so the hot paths below check first and build the
# "where" of an error message only when there is an error.


def _tool_calls(raw: Any, where: str) -> tuple[list[Command], bool]:
    if raw is None:
        return [], False
    expect(isinstance(raw, list), where, "a list of tool calls", raw)
    commands: list[Command] = []
    complete = False
    for i, call in enumerate(raw):
        if not isinstance(call, dict):
            expect(False, f"{where}[{i}]", "an object {tool_call_id, function_name, arguments}", call)
        name = call.get("function_name")
        if not isinstance(name, str):
            expect(False, f"{where}[{i}].function_name", "a string", name)
        args = call.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError:
                raise FormatError(
                    f"{where}[{i}].arguments: expected a JSON object, got a string that is not JSON"
                ) from None
        if not isinstance(args, dict):
            expect(False, f"{where}[{i}].arguments", "an object", args)
        if name in COMPLETE_TOOLS:
            complete = True
            continue
        keys = keystrokes_of_call(args)
        if keys is not None:
            duration = args.get("duration", args.get("timeout_sec", 1.0))
            if not isinstance(duration, int | float) or isinstance(duration, bool):
                duration = 1.0
            commands.append(
                construct(Command, {"keystrokes": keys, "duration": float(duration), "function_name": name})
            )
    return commands, complete


def _observation(raw: Any, where: str) -> str | None:
    if raw is None:
        return None
    expect(isinstance(raw, dict), where, "an object {results: [...]}", raw)
    results = raw.get("results", [])
    expect(isinstance(results, list), f"{where}.results", "a list", results)
    parts = []
    for i, res in enumerate(results):
        if not isinstance(res, dict):
            expect(False, f"{where}.results[{i}]", "an object {source_call_id, content}", res)
        content = res.get("content")
        parts.append(content if isinstance(content, str) else _text(content, f"{where}.results[{i}].content"))
    return "\n".join(parts)


def _metric(metrics: dict, key: str, where: str) -> int | None:
    value = metrics.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return _int(value, f"{where}.metrics.{key}")


def parse_steps(raw_steps: Any) -> list[Step]:
    """Validate and convert ATIF steps; step ids must run 1..n in order."""
    expect(isinstance(raw_steps, list), "steps", "a list of step objects", raw_steps)
    steps: list[Step] = []
    seen_user = False
    for i, raw in enumerate(raw_steps):
        where = f"steps[{i}]"
        expect(isinstance(raw, dict), where, "a step object", raw)
        step_id = raw.get("step_id")
        if not isinstance(step_id, int) or isinstance(step_id, bool):
            expect(False, f"{where}.step_id", "an integer", step_id)
        if step_id != i + 1:
            raise FormatError(
                f"{where}.step_id: expected {i + 1} (step ids run 1..n in order), got {preview(step_id)}"
            )
        source = raw.get("source")
        if source not in ("system", "user", "agent"):
            expect(False, f"{where}.source", "system, user or agent", source)
        message = raw.get("message")
        if not isinstance(message, str):
            message = _text(message, f"{where}.message")
        extra = raw.get("extra") or {}
        if not isinstance(extra, dict):
            expect(False, f"{where}.extra", "an object", extra)
        tool_calls = raw.get("tool_calls")
        commands, complete = (
            _tool_calls(tool_calls, f"{where}.tool_calls") if tool_calls is not None else ([], False)
        )
        metrics = raw.get("metrics") or {}
        if not isinstance(metrics, dict):
            expect(False, f"{where}.metrics", "an object", metrics)
        analysis = plan = None
        if source == "agent":
            analysis, plan = split_message(message)
            if analysis is None and message.lstrip().startswith("{"):
                parsed = parse_lenient(message)
                if parsed is not None:
                    analysis, plan = parsed.analysis, parsed.plan
                    if not commands:
                        commands = parsed.commands
                    complete = complete or parsed.task_complete
        control = bool(extra.get("harness_control"))
        if not control and source != "agent" and seen_user:
            control = is_control_message(message)
        seen_user = seen_user or source == "user"
        reasoning = raw.get("reasoning_content")
        leftover = {} if raw.keys() <= STEP_KEYS else {k: v for k, v in raw.items() if k not in STEP_KEYS}
        step_extra = (
            {
                k: v
                for k, v in extra.items()
                if k not in ("harness_control", "rsr_private_guidance", "task_complete", "rsr_step")
            }
            if extra
            else {}
        )
        if leftover:
            step_extra["_atif"] = leftover
        if metrics.get("cached_tokens") is not None:
            step_extra["cached_tokens"] = metrics.get("cached_tokens")
        observation = raw.get("observation")
        cost = metrics.get("cost_usd")
        timestamp = raw.get("timestamp")
        model_name = raw.get("model_name")
        fields = {  # in Step's field order (the cheapest for `construct`)
            "schema_version": 1,
            "index": step_id,
            "source": source,
            "message": message,
            "analysis": analysis,
            "plan": plan,
            "reasoning": reasoning if isinstance(reasoning, str) else None,
            "commands": commands,
            "observation": _observation(observation, f"{where}.observation")
            if observation is not None
            else None,
            "task_complete": complete or bool(extra.get("task_complete")),
            "harness_control": control,
            "private_guidance": bool(extra.get("rsr_private_guidance")),
            "copied_context": raw.get("is_copied_context") is True,
            "model_name": model_name if isinstance(model_name, str) else None,
            "timestamp": str(timestamp) if timestamp is not None else None,
            "prompt_tokens": _metric(metrics, "prompt_tokens", where),
            "completion_tokens": _metric(metrics, "completion_tokens", where),
            "cost_usd": None if cost is None else _num(cost, f"{where}.metrics.cost_usd"),
            "extra": step_extra,
        }
        rsr_step = extra.get("rsr_step")
        if rsr_step is not None:
            fields.update(stored_step_values(rsr_step, f"{where}.extra.rsr_step"))
        steps.append(construct(Step, fields))
    return steps


def rsr_extra(obj: dict) -> dict:
    """The RSR provenance block `extra.rsr`, validated."""
    extra = obj.get("extra") or {}
    expect(isinstance(extra, dict), "extra", "an object", extra)
    rsr = extra.get("rsr") or {}
    expect(isinstance(rsr, dict), "extra.rsr", "an object", rsr)
    if rsr.get("kind") is not None:
        expect(rsr["kind"] in KINDS, "extra.rsr.kind", "discovery, rewrite or eval", rsr["kind"])
    if rsr.get("reward") is not None:
        rsr["reward"] = checked_reward(rsr["reward"], "extra.rsr.reward")
    for key in (
        "task_id",
        "harness",
        "source_trajectory_id",
        "runbook_id",
        "job_id",
        "content_hash",
        *STORED_TRAJECTORY_FIELDS,
    ):
        if rsr.get(key) is not None:
            expect(isinstance(rsr[key], str), f"extra.rsr.{key}", "a string", rsr[key])
    if rsr.get("verifier_tampered") is not None:
        expect(
            isinstance(rsr["verifier_tampered"], bool),
            "extra.rsr.verifier_tampered",
            "true or false",
            rsr["verifier_tampered"],
        )
    if rsr.get("changed_paths") is not None:
        rsr["changed_paths"] = changed_paths(rsr["changed_paths"], "extra.rsr.changed_paths")
    return rsr


def changed_paths(raw: Any, where: str) -> list[ChangedPath]:
    """Validated `changed_paths` entries ({path, change, verifier_ground})."""
    expect(isinstance(raw, list), where, "a list of {path, change, verifier_ground} objects", raw)
    out = []
    for i, item in enumerate(raw):
        expect(isinstance(item, dict), f"{where}[{i}]", "an object {path, change, verifier_ground}", item)
        expect(isinstance(item.get("path"), str), f"{where}[{i}].path", "a string", item.get("path"))
        expect(
            item.get("change") in ("added", "changed", "deleted"),
            f"{where}[{i}].change",
            "added, changed or deleted",
            item.get("change"),
        )
        ground = item.get("verifier_ground", False)
        expect(isinstance(ground, bool), f"{where}[{i}].verifier_ground", "true or false", ground)
        out.append(ChangedPath(path=item["path"], change=item["change"], verifier_ground=ground))
    return out


def carried_hash(rsr: dict) -> str | None:
    """The content hash an RSR-written file carries (`extra.rsr.content_hash`): re-reading what this tool wrote
    is then recognised as the trajectory it already stores."""
    value = rsr.get("content_hash")
    return value if isinstance(value, str) and value else None


def parse_atif(obj: Any) -> tuple[Trajectory, dict]:
    """Convert a parsed ATIF document; returns the trajectory and its `extra.rsr` block.

    Kind, harness, task and reward come from `extra.rsr` when present; the caller applies CLI flags and
    falls back to the harbor trial for what `extra.rsr` does not say."""
    expect(
        isinstance(obj, dict), "root", "an ATIF object with schema_version, session_id, agent and steps", obj
    )
    check_version(obj)
    session_id = obj.get("session_id")
    traj_id = obj.get("trajectory_id") or session_id
    expect(isinstance(traj_id, str) and traj_id != "", "session_id", "a non-empty string", session_id)
    agent = obj.get("agent")
    expect(isinstance(agent, dict), "agent", "an object {name, version, model_name}", agent)
    expect(isinstance(agent.get("name"), str), "agent.name", "a string", agent.get("name"))
    expect("steps" in obj, "steps", "a list of step objects", None)
    rsr = rsr_extra(obj)
    steps = parse_steps(obj["steps"])
    extra = {k: v for k, v in (obj.get("extra") or {}).items() if k != "rsr"}
    for key in ("notes", "final_metrics"):
        if obj.get(key) is not None:
            extra[key] = obj[key]
    if agent.get("extra"):
        extra["agent_extra"] = agent["extra"]
    schema_version = rsr.get("source_schema_version", obj["schema_version"])
    if schema_version is not None:
        extra["schema_version"] = schema_version
    instruction = next((s.message for s in steps if s.source == "user"), None)
    agent_model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
    traj = Trajectory.model_construct(
        trajectory_id=traj_id,
        session_id=rsr.get("session_id", session_id if isinstance(session_id, str) else None),
        task_id=task_id_of(rsr.get("task_id")),
        kind=rsr.get("kind") or "discovery",
        harness=canonical_harness(rsr.get("harness") or agent["name"]),
        agent_name=rsr.get("agent_name", agent["name"]),
        agent_version=str(agent["version"]) if agent.get("version") is not None else None,
        model=rsr.get("model", agent_model),
        reward=float(rsr["reward"]) if rsr.get("reward") is not None else None,
        source_trajectory_id=rsr.get("source_trajectory_id"),
        runbook_id=rsr.get("runbook_id"),
        job_id=rsr.get("job_id"),
        instruction=rsr.get("instruction", instruction),
        started_at=rsr.get("started_at", steps[0].timestamp if steps else None),
        finished_at=rsr.get("finished_at", steps[-1].timestamp if steps else None),
        exception=rsr.get("exception", None),
        verifier_output=rsr.get("verifier_output", None),
        scripted=bool(rsr.get("scripted")),
        verifier_tampered=bool(rsr.get("verifier_tampered")),
        changed_paths=rsr.get("changed_paths") or [],
        origin=None,
        content_hash="",
        steps=steps,
        extra=extra,
        schema_version=1,
    )
    return traj, rsr
