"""The Terminus 2 JSON protocol: parsing model answers strictly, with messages the model can act on."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from rsr_core.models import Command

DEFAULT_DURATION = 1.0
MAX_DURATION = 60.0
OBSERVATION_LIMIT = 10_000
OBSERVATION_HALF = 5_000


TERMINUS_KEYS = ("analysis", "plan", "commands", "task_complete")


class ProtocolError(ValueError):
    """The model's answer does not follow the protocol; the message is fed back to it."""


@dataclass
class TerminusResponse:
    """A parsed Terminus 2 (or StateM) answer."""

    analysis: str
    plan: str
    commands: list[Command]
    task_complete: bool
    transition: str | None = None
    warnings: list[str] = field(default_factory=list)


_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
MAX_STARTS = 2_000
"""Opening braces tried before giving up (an answer of many braces none of which starts an object)."""


def _objects(
    text: str, prefer: tuple[str, ...]
) -> tuple[tuple[dict, int, int] | None, json.JSONDecodeError | None]:
    """The JSON object of an answer with its span: in a fenced block first, else the first opening brace from
    which a whole object parses (braces inside strings and prose around it do not matter); among several, the
    first holding the most of the `prefer`red keys. Also the first decoding error, to report."""
    found: list[tuple[dict, int, int]] = []
    first_error: json.JSONDecodeError | None = None
    for fence in _FENCE.finditer(text):
        body = fence.group(1).strip()
        try:
            obj = json.loads(body)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            found.append((obj, fence.start(), fence.end()))
    if not found:
        start = text.find("{")
        tries = 0
        while start >= 0 and tries < MAX_STARTS:
            tries += 1
            try:
                obj, end = _DECODER.raw_decode(text, start)
            except json.JSONDecodeError as exc:
                if first_error is None:
                    first_error = exc
                    if not _closes(text, start):  # the text ends inside this object: the answer was cut, and
                        return None, _CUT  # the objects inside it are its parts, not the answer
                start = text.find("{", start + 1)
                continue
            if isinstance(obj, dict):
                found.append((obj, start, end))
                if not prefer:
                    break
            start = text.find("{", end)
    if not found:
        return None, first_error
    return max(found, key=lambda f: sum(k in f[0] for k in prefer)), None


_CUT = json.JSONDecodeError("the object is never closed", "", 0)


def _closes(text: str, start: int) -> bool:
    """Whether the brace at `start` is closed before the text ends (braces inside strings do not count)."""
    depth, in_string, escaped = 0, False, False
    for ch in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return True
    return False


def extract_json_object(text: str, prefer: tuple[str, ...] = ()) -> tuple[dict, list[str]]:
    """The JSON object in a model answer (see `_objects`; fences and surrounding prose tolerated, with
    warnings). Thinking is taken out before (`formats.thinking`), so braces in it cannot be mistaken for it."""
    if "{" not in text:
        raise ProtocolError("No JSON object found: answer with a single JSON object.")
    chosen, error = _objects(text, prefer)
    if chosen is None:
        if error is _CUT:
            raise ProtocolError("Invalid JSON: the object is never closed (was the answer cut off?).")
        if error is not None:
            raise ProtocolError(f"Invalid JSON: {error.msg} at line {error.lineno} column {error.colno}.")
        raise ProtocolError("The answer must be a JSON object.")
    obj, start, end = chosen
    warnings: list[str] = []
    if text[:start].strip().strip("`").removeprefix("json").strip():
        warnings.append("Extra text before the JSON object was ignored.")
    if text[end:].strip().strip("`").strip():
        warnings.append("Extra text after the JSON object was ignored.")
    return obj, warnings


def _as_bool(value: object, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ProtocolError(f"Field '{name}' must be true or false, got {json.dumps(value)}.")


def parse_terminus(text: str, allow_transition: bool = False) -> TerminusResponse:
    """Parse a Terminus 2 answer: {"analysis", "plan", "commands": [{"keystrokes", "duration"}], "task_complete"}."""
    obj, warnings = extract_json_object(text, TERMINUS_KEYS)
    for name in ("analysis", "plan"):
        if name not in obj:
            raise ProtocolError(f"Missing required field '{name}'.")
        if not isinstance(obj[name], str):
            raise ProtocolError(f"Field '{name}' must be a string.")
    if "commands" not in obj:
        raise ProtocolError("Missing required field 'commands' (use [] when there is nothing to run).")
    if not isinstance(obj["commands"], list):
        raise ProtocolError('Field \'commands\' must be a list of {"keystrokes", "duration"} objects.')
    commands = []
    for i, item in enumerate(obj["commands"]):
        if not isinstance(item, dict) or not isinstance(item.get("keystrokes"), str):
            raise ProtocolError(f"commands[{i}] must be an object with a string 'keystrokes'.")
        duration = item.get("duration", DEFAULT_DURATION)
        if isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0:
            raise ProtocolError(f"commands[{i}].duration must be a non-negative number of seconds.")
        if duration > MAX_DURATION:
            warnings.append(f"commands[{i}].duration {duration} capped at {MAX_DURATION:g} s.")
            duration = MAX_DURATION
        commands.append(Command(keystrokes=item["keystrokes"], duration=float(duration)))
    complete = _as_bool(obj.get("task_complete", False), "task_complete")
    transition = obj.get("transition")
    if transition is not None and not (allow_transition and isinstance(transition, str)):
        if not allow_transition:
            warnings.append("Field 'transition' is not part of this harness and was ignored.")
            transition = None
        else:
            raise ProtocolError("Field 'transition' must be a phase name.")
    return TerminusResponse(obj["analysis"], obj["plan"], commands, complete, transition, warnings)


def parse_lenient(text: str) -> TerminusResponse | None:
    """Best-effort read of a recorded Terminus answer (v2 fields, or Terminus 1's) for ingest; None if unreadable."""
    try:
        return parse_terminus(text, allow_transition=True)
    except ProtocolError:
        pass
    try:
        obj, _ = extract_json_object(
            text, (*TERMINUS_KEYS, "state_analysis", "explanation", "is_task_complete")
        )
    except ProtocolError:
        return None
    commands = []
    for item in obj.get("commands") or []:
        if isinstance(item, dict) and isinstance(item.get("keystrokes"), str):
            dur = item.get("duration", item.get("timeout_sec", DEFAULT_DURATION))
            dur = (
                float(dur) if isinstance(dur, int | float) and not isinstance(dur, bool) else DEFAULT_DURATION
            )
            commands.append(Command(keystrokes=item["keystrokes"], duration=dur))
    analysis = obj.get("analysis", obj.get("state_analysis"))
    plan = obj.get("plan", obj.get("explanation"))
    complete = obj.get("task_complete", obj.get("is_task_complete", False))
    return TerminusResponse(
        analysis if isinstance(analysis, str) else "",
        plan if isinstance(plan, str) else "",
        commands,
        complete is True or (isinstance(complete, str) and complete.lower() == "true"),
        obj.get("transition") if isinstance(obj.get("transition"), str) else None,
    )


def cut_observation(text: str, limit: int = OBSERVATION_LIMIT) -> str:
    """Keep the first and last half of an over-long observation, saying how much was left out."""
    if len(text.encode()) <= limit:
        return text
    raw = text.encode()
    half = limit // 2
    head = raw[:half].decode(errors="ignore")
    tail = raw[-half:].decode(errors="ignore")
    omitted = len(raw) - 2 * half
    return f"{head}\n[... output limited to {limit} bytes; {omitted} interior bytes omitted ...]\n{tail}"


def format_message(analysis: str, plan: str) -> str:
    """The agent step message as Terminus 2 records it in ATIF."""
    return f"Analysis: {analysis}\nPlan: {plan}"


def split_message(message: str) -> tuple[str | None, str | None]:
    """Read "Analysis: …\\nPlan: …" back into its parts."""
    if not message.startswith("Analysis:"):
        return None, None
    body = message[len("Analysis:") :]
    idx = body.find("\nPlan:")
    if idx < 0:
        return body.strip(), None
    return body[:idx].strip(), body[idx + len("\nPlan:") :].strip()
