"""ATIF `trajectory.json` (ATIF-v1.0 … ATIF-v1.8) -> Trajectory, with RSR provenance from `extra.rsr`.

What the store has no field for travels in `extra["_atif"]` (of the trajectory or of a step) and is written
back unchanged by the ATIF export: unknown root keys (`subagent_trajectories`, `continued_trajectory_ref`, …),
agent keys (`tool_definitions`), unknown step keys (`llm_call_count`, …), and a step's `message`, `tool_calls`
or `observation` when they are not what the export would write from the stored fields (content parts with
images, the original tool-call ids, tools that are not terminal commands, subagent references).

An agent step of an RSR file may carry, in `extra.rsr_harness_steps`, the harness messages written into its
observation after the terminal output (as harbor's Terminus 2 writes its confirmation question): they are
read back as the user steps, marked `harness_control`, that the harness recorded, and the observation as the
terminal output alone. Harness messages written as user steps of their own read as they are.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from types import ModuleType
from typing import Any

from rsr_core.formats.commands import keystrokes_of_call
from rsr_core.formats.control import canonical_harness, is_control_message, task_id_of
from rsr_core.formats.provenance import carried_hash, rsr_extra, stored_step_values
from rsr_core.formats.reading import FormatError, construct, expect, load_json, preview, timestamp_text
from rsr_core.formats.terminus import parse_lenient, split_message
from rsr_core.formats.tool_calls import canonical_tool_calls
from rsr_core.models import Command, Step, Trajectory, as_kind

__all__ = [
    "HARNESS_STEPS",
    "MAX_STEPS",
    "canonical_tool_calls",
    "carried_hash",
    "is_atif",
    "parse_atif",
    "parse_steps",
]

SUPPORTED_MINOR = range(0, 9)
MAX_STEPS = 100_000
"""The most steps one trajectory may have (far beyond the longest run of the paper-scale benchmark corpus):
each parsed step costs kilobytes, whatever its size in the file."""
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
ROOT_KEYS = frozenset(
    {"schema_version", "session_id", "trajectory_id", "agent", "steps", "notes", "final_metrics", "extra"}
)
AGENT_KEYS = frozenset({"name", "version", "model_name", "extra"})
HARNESS_STEPS = "rsr_harness_steps"
"""Agent step `extra` key: the harness messages that followed the turn, each `{message, timestamp?, extra?,
index?}`, written into its observation after the terminal output, blank-line joined."""
IDS_OPTIONAL_FROM = 7
"""From ATIF-v1.7 on the root `session_id` is optional; a file without any id gets one derived from its
content."""


def is_atif(obj: Any) -> bool:
    """Does this JSON value claim to be an ATIF trajectory?"""
    return isinstance(obj, dict) and str(obj.get("schema_version", "")).startswith("ATIF")


def version_minor(version: Any) -> int | None:
    """The minor number of an `ATIF-v1.N` version string (None for anything else)."""
    match = _VERSION.match(version) if isinstance(version, str) else None
    return int(match.group(1)) if match else None


def check_version(obj: dict) -> str:
    """The schema_version, or a FormatError naming the supported ones."""
    version = obj.get("schema_version")
    if version_minor(version) not in SUPPORTED_MINOR:
        raise FormatError(
            f"schema_version: {preview(version)} is not supported; expected ATIF-v1.0 … ATIF-v1.8"
        )
    return str(version)


def canonical_observation(text: str, calls: list[dict]) -> dict:
    """The observation the ATIF export writes for a stored observation text (one result, tied to the first
    tool call of the step when it has one)."""
    result: dict[str, Any] = {"content": text}
    if calls:
        result = {"source_call_id": calls[0]["tool_call_id"], **result}
    return {"results": [result]}


def content_id(obj: dict) -> str:
    """An id for a trajectory file that names none: a digest of its content, stable across re-ingests."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "atif-" + hashlib.sha256(text.encode()).hexdigest()[:24]


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


def _tool_calls(raw: Any, where: str) -> tuple[list[Command], bool, list[dict]]:
    """(commands, completion claimed, the calls with JSON-string arguments parsed)."""
    expect(isinstance(raw, list), where, "a list of tool calls", raw)
    commands: list[Command] = []
    complete = False
    calls: list[dict] = []
    for i, call in enumerate(raw):
        if not isinstance(call, dict):
            expect(False, f"{where}[{i}]", "an object {tool_call_id, function_name, arguments}", call)
        name = call.get("function_name")
        if not isinstance(name, str):
            expect(False, f"{where}[{i}].function_name", "a string", name)
        args = call.get("arguments", {})
        if isinstance(args, str):
            try:
                args = load_json(args) if args.strip() else {}
            except FormatError as exc:  # a repeated key or too deep: the strings obey the file's rules
                raise FormatError(f"{where}[{i}].arguments: {exc}") from None
            except (ValueError, RecursionError):
                raise FormatError(
                    f"{where}[{i}].arguments: expected a JSON object, got a string that is not JSON"
                ) from None
        if not isinstance(args, dict):
            expect(False, f"{where}[{i}].arguments", "an object", args)
        calls.append(call if args is call.get("arguments") else {**call, "arguments": args})
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
    return commands, complete, calls


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
        if content is None and res.get("subagent_trajectory_ref"):
            continue  # a delegated trajectory, not text the agent saw (kept with the document)
        parts.append(content if isinstance(content, str) else _text(content, f"{where}.results[{i}].content"))
    if (
        not parts
        and results
        and all(isinstance(r, dict) and r.get("subagent_trajectory_ref") for r in results)
    ):
        return None
    return "\n".join(parts)


def _metric(metrics: dict, key: str, where: str) -> int | None:
    value = metrics.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return _int(value, f"{where}.metrics.{key}")


def _kept_structures(
    raw: dict,
    step_id: int,
    source: str,
    commands: list[Command],
    complete: bool,
    calls: list[dict] | None,
    observation_text: str | None,
) -> dict[str, Any]:
    """The step's message, tool calls and observation as written, where the export would not write them the
    same from the stored fields (checked against what it writes, so RSR's own files keep nothing twice)."""
    kept: dict[str, Any] = {}
    message = raw.get("message")
    if message is not None and not isinstance(message, str):
        kept["message"] = message
    written = canonical_tool_calls(step_id, source, commands, complete)
    if calls is not None and calls != written:
        kept["tool_calls"] = written = calls
    observation = raw.get("observation")
    if observation is not None and observation != canonical_observation(observation_text or "", written):
        kept["observation"] = observation
    return kept


def _harness_steps(
    raw: Any, where: str, observation: str | None, first_index: int
) -> tuple[str | None, list[Step]]:
    """(the observation without the harness messages, the steps they were recorded as) of an agent step's
    `HARNESS_STEPS` entries, read from position `first_index` on."""
    expect(isinstance(raw, list), where, "a list of {message, timestamp, extra} objects", raw)
    steps: list[Step] = []
    for i, entry in enumerate(raw):
        at = f"{where}[{i}]"
        expect(isinstance(entry, dict), at, "an object {message, timestamp, extra}", entry)
        expect(isinstance(entry.get("message"), str), f"{at}.message", "a string", entry.get("message"))
        timestamp = entry.get("timestamp")
        expect(timestamp is None or isinstance(timestamp, str), f"{at}.timestamp", "a string", timestamp)
        extra = entry.get("extra", {})
        expect(isinstance(extra, dict), f"{at}.extra", "an object", extra)
        index = entry.get("index", first_index + i)
        expect(isinstance(index, int) and not isinstance(index, bool), f"{at}.index", "an integer", index)
        steps.append(
            construct(
                Step,
                {
                    "index": index,
                    "source": "user",
                    "message": entry["message"],
                    "harness_control": True,
                    "timestamp": timestamp,
                    "extra": extra,
                },
            )
        )
    suffix = "".join("\n\n" + s.message for s in steps)
    if observation is not None and suffix and observation.endswith(suffix):
        observation = observation[: -len(suffix)]
    return observation, steps


@cache
def native_steps() -> ModuleType | None:
    """The C build of `parse_steps` for the steps harbor's Terminus 2 writes (rsr_core/formats/_steps.c), set up;
    None where the package was installed without it (no C compiler)."""
    try:
        from rsr_core.formats import _steps  # type: ignore[attr-defined]
    except ImportError:
        return None
    _steps.configure(
        Step,
        tuple(Step.__pydantic_fields__),
        Command,
        tuple(Command.__pydantic_fields__),
        is_control_message,
        MAX_STEPS,
    )
    return _steps


def parse_steps(raw_steps: Any, native: bool = True) -> list[Step]:
    """Validate and convert ATIF steps; step ids must run 1..n in order. A step's index is its position among
    the steps read (harness messages folded into an observation are steps of their own), unless the file
    carries the stored one.

    Steps of the shapes the C build takes on (`native_steps`) are read there, unless `native` is False; it
    hands back every other list, read below."""
    fast = native_steps() if native else None
    if fast is not None:
        read: list[Step] | None = fast.parse_steps(raw_steps)
        if read is not None:
            return read
    expect(isinstance(raw_steps, list), "steps", "a list of step objects", raw_steps)
    if len(raw_steps) > MAX_STEPS:
        raise FormatError(
            f"steps: {len(raw_steps):,} steps, more than the limit of {MAX_STEPS:,} for one trajectory; not read"
        )
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
        commands, complete, calls = (
            _tool_calls(tool_calls, f"{where}.tool_calls") if tool_calls is not None else ([], False, None)
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
                if k
                not in ("harness_control", "rsr_private_guidance", "task_complete", "rsr_step", HARNESS_STEPS)
            }
            if extra
            else {}
        )
        if metrics.get("cached_tokens") is not None:
            step_extra["cached_tokens"] = metrics.get("cached_tokens")
        observation = raw.get("observation")
        observation_text = (
            _observation(observation, f"{where}.observation") if observation is not None else None
        )
        task_complete = complete or bool(extra.get("task_complete"))
        kept = _kept_structures(raw, step_id, source, commands, task_complete, calls, observation_text)
        if leftover or kept:
            step_extra["_atif"] = {**leftover, **kept}
        harness: list[Step] = []
        if source == "agent" and extra.get(HARNESS_STEPS) is not None:
            folded = extra[HARNESS_STEPS]
            if isinstance(folded, list) and len(steps) + 1 + len(folded) > MAX_STEPS:
                raise FormatError(
                    f"{where}.extra.{HARNESS_STEPS}: with these harness messages the trajectory has more than "
                    f"the limit of {MAX_STEPS:,} steps; not read"
                )
            observation_text, harness = _harness_steps(
                extra[HARNESS_STEPS], f"{where}.extra.{HARNESS_STEPS}", observation_text, len(steps) + 2
            )
        cost = metrics.get("cost_usd")
        timestamp = raw.get("timestamp")
        model_name = raw.get("model_name")
        fields = {  # in Step's field order (the cheapest for `construct`)
            "schema_version": 1,
            "index": len(steps) + 1,
            "source": source,
            "message": message,
            "analysis": analysis,
            "plan": plan,
            "reasoning": reasoning if isinstance(reasoning, str) else None,
            "commands": commands,
            "observation": observation_text,
            "task_complete": task_complete,
            "harness_control": control,
            "private_guidance": bool(extra.get("rsr_private_guidance")),
            "copied_context": raw.get("is_copied_context") is True,
            "model_name": model_name if isinstance(model_name, str) else None,
            "timestamp": timestamp
            if timestamp is None or isinstance(timestamp, str)
            else timestamp_text(timestamp, f"{where}.timestamp"),
            "prompt_tokens": _metric(metrics, "prompt_tokens", where),
            "completion_tokens": _metric(metrics, "completion_tokens", where),
            "cost_usd": None if cost is None else _num(cost, f"{where}.metrics.cost_usd"),
            "extra": step_extra,
        }
        rsr_step = extra.get("rsr_step")
        if rsr_step is not None:
            fields.update(stored_step_values(rsr_step, f"{where}.extra.rsr_step"))
        steps.append(construct(Step, fields))
        steps += harness
        seen_user = seen_user or bool(harness)
    return steps


def _trajectory_id(obj: dict, minor: int) -> str:
    """`trajectory_id`, else `session_id`; from ATIF-v1.7 on, where both are optional, else the content id."""
    for key in ("trajectory_id", "session_id"):
        value = obj.get(key)
        expect(value is None or isinstance(value, str), key, "a string", value)
    traj_id = obj.get("trajectory_id") or obj.get("session_id")
    if not traj_id and minor >= IDS_OPTIONAL_FROM:
        return content_id(obj)
    if not isinstance(traj_id, str) or not traj_id:
        raise FormatError(f"session_id: expected a non-empty string, got {preview(obj.get('session_id'))}")
    return traj_id


def _kept_root(obj: dict, agent: dict) -> dict[str, Any]:
    """Root and agent keys the store has no field for (`subagent_trajectories`, `continued_trajectory_ref`,
    `agent.tool_definitions`, …), checked where ATIF says what they are."""
    kept = {k: v for k, v in obj.items() if k not in ROOT_KEYS}
    subagents = kept.get("subagent_trajectories")
    if subagents is not None:
        expect(isinstance(subagents, list), "subagent_trajectories", "a list of ATIF trajectories", subagents)
        for i, sub in enumerate(subagents):
            expect(
                isinstance(sub, dict) and isinstance(sub.get("steps"), list),
                f"subagent_trajectories[{i}]",
                "an ATIF trajectory object with steps",
                sub,
            )
    ref = kept.get("continued_trajectory_ref")
    expect(ref is None or isinstance(ref, str), "continued_trajectory_ref", "a string", ref)
    agent_kept = {k: v for k, v in agent.items() if k not in AGENT_KEYS}
    if agent_kept:
        kept["agent"] = agent_kept
    return kept


def parse_atif(obj: Any) -> tuple[Trajectory, dict]:
    """Convert a parsed ATIF document; returns the trajectory and its `extra.rsr` block.

    Kind, harness, task and reward come from `extra.rsr` when present; the caller applies CLI flags and
    falls back to the harbor trial for what `extra.rsr` does not say."""
    expect(
        isinstance(obj, dict), "root", "an ATIF object with schema_version, session_id, agent and steps", obj
    )
    minor = version_minor(check_version(obj))
    session_id = obj.get("session_id")
    traj_id = _trajectory_id(obj, minor or 0)
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
    kept = _kept_root(obj, agent)
    if kept:
        extra["_atif"] = kept
    schema_version = rsr.get("source_schema_version", obj["schema_version"])
    if schema_version is not None:
        extra["schema_version"] = schema_version
    instruction = next((s.message for s in steps if s.source == "user"), None)
    agent_model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
    traj = Trajectory.model_construct(
        trajectory_id=traj_id,
        session_id=rsr.get("session_id", session_id if isinstance(session_id, str) else None),
        task_id=task_id_of(rsr.get("task_id")),
        kind=as_kind(rsr.get("kind") or "discovery"),
        harness=canonical_harness(rsr.get("harness") or agent["name"]),
        agent_name=rsr.get("agent_name", agent["name"]),
        agent_version=rsr["agent_version"]
        if "agent_version" in rsr
        else (str(agent["version"]) if agent.get("version") is not None else None),
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
