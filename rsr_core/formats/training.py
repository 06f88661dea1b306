"""Training conversations: the general-harness (Terminus 2) conversation a model sees at inference, built
from a trajectory, and the key that makes two of them exact duplicates.

System/user prompt (instruction and initial terminal state), then assistant turns as Terminus 2 JSON and user
turns as the observations that followed them. Runbooks (private guidance), harness-control steps and RSR
provenance never appear in messages.

These rules decide what an export writes; the store keeps each trajectory's `stored_training` (its key, or why
it makes no row) from when it was written, so counting an export needs no pass over the steps. Change a rule
and raise TRAINING_RULE: keys stored under an earlier rule are then worked out again when counted.
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import cache
from json.encoder import encode_basestring
from typing import Any

from rsr_core.formats.terminus1 import (
    TERMINUS1_HARNESSES,
    is_terminus1_answer,
    is_terminus1_prompt,
    terminus1_json,
)
from rsr_core.formats.thinking import joined_thinking, split_thinking
from rsr_core.formats.tool_calls import MULTIMODAL, has_media, tool_calls, tool_results, uses_tools
from rsr_core.models import Step, Trajectory

TRAINING_RULE = 3
"""Version of the rules below; stored with every key (trajectories.training_rule)."""
ANSWER = "answer"
"""Step `extra` key of the answer exactly as the model returned it, thinking taken out (the harnesses of this
project record it on every agent turn they read)."""
CONVERSATION_START = "conversation_start"
"""Step `extra` key of the first user message of a fresh conversation a harness started when the last one
outgrew the model's context (a hand-off)."""
HANDOFF = "handoff"
"""Step `extra` key of a hand-off's summary step: the request that asked for it and how many messages it left
out."""


@cache
def confirmation() -> str:
    """Terminus 2's "are you sure?" question (`in_dialogue`)."""
    from rsr_core import prompts

    return str(prompts.load_json("terminus2_messages_v1.json")["confirm"])


def in_dialogue(step: Step) -> bool:
    """A harness message that is part of the general harness's own dialogue: Terminus 2's "are you sure?"
    question, which the harness sends in the same user message as the observation before it (recorded as a step
    of its own by this project's harness, inside the observation by harbor's). A model meets it at inference."""
    return step.harness_control and step.source == "user" and step.message == confirmation()


def removed_from_training(step: Step) -> bool:
    """Steps that never train: a runbook given as private guidance, a message a harness injected (but the
    general harness's confirmation question, `in_dialogue`), or context copied from an earlier trajectory (ATIF
    `is_copied_context`)."""
    return step.private_guidance or step.copied_context or (step.harness_control and not in_dialogue(step))


def training_steps(steps: list[Step]) -> list[Step]:
    """The steps that make the training conversation, in order.

    Private-guidance, harness-control and copied-context steps are removed. So is an agent turn without
    commands that would directly follow another assistant turn when it only answered a removed harness message,
    or repeated the completion claim (Terminus 2 asks "are you sure?" and wants task_complete twice): it adds
    nothing, and left in it would make two assistant turns in a row.
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


def assistant_content(step: Step, reasoning: bool = False, terminus1: bool = False) -> str:
    """An agent turn as the model said it: the answer recorded as returned (`ANSWER`), else a recorded message
    that is itself the answer (a Terminal-Bench response file: JSON, or fenced JSON), else, for sources that
    kept only its parts (harbor's "Analysis: …\nPlan: …"), the Terminus 2 JSON answer rebuilt from them. A turn
    that is not a Terminus answer is kept verbatim. Thinking is never part of it (a recorded message loses what
    it holds inline); with `reasoning`, the turn's thinking goes back in front as `<think>…</think>` (the way
    harbor's export writes it). `terminus1`: the run's harness asked for Terminus 1's answer format
    (`uses_terminus1`), so an answer that is not already a valid Terminus 1 answer is rebuilt as one."""
    inline, text = _said(step, terminus1)
    thinking = joined_thinking(step.reasoning, inline)
    if reasoning and thinking:
        return f"<think>{thinking}</think>\n\n{text}"
    return text


def _said(step: Step, terminus1: bool = False) -> tuple[str | None, str]:
    """(thinking written inline, answer) of an agent turn."""
    answer = step.extra.get(ANSWER)
    if isinstance(answer, str) and not (terminus1 and not is_terminus1_answer(answer)):
        return None, answer
    inline, message = split_thinking(step.message)
    if terminus1:
        return inline, _terminus1_said(step, message)
    if message.lstrip()[:1] in ("{", "`") and step.analysis is not None:
        return inline, message
    if step.analysis is None and step.plan is None:
        if not step.commands and not step.task_complete:
            return inline, message
        analysis, plan = message, ""
    else:
        analysis, plan = step.analysis or "", step.plan or ""
    return inline, terminus_json(
        analysis, plan, [(c.keystrokes, c.duration) for c in step.commands], step.task_complete
    )


def _terminus1_said(step: Step, message: str) -> str:
    """A Terminus 1 run's answer: as recorded when it is a valid Terminus 1 answer, else rebuilt as one from its
    parts (a Terminus 2 answer, harbor's "Analysis: …\nPlan: …", tool calls); not a Terminus answer: verbatim."""
    if is_terminus1_answer(message):
        return message
    if step.analysis is None and step.plan is None:
        if not step.commands and not step.task_complete:
            return message
        return terminus1_json(message, "", step.commands, step.task_complete)
    return terminus1_json(step.analysis or "", step.plan or "", step.commands, step.task_complete)


def uses_terminus1(trajectory: Trajectory) -> bool:
    """Was the run's model asked for Terminus 1's answer (Terminal-Bench's `terminus-1` harness, or a prompt
    before the first agent turn carrying Terminus 1's answer schema)? Its answers train in that format."""
    if trajectory.harness.strip().lower() in TERMINUS1_HARNESSES:
        return True
    for step in trajectory.steps:
        if step.source == "agent":
            return False
        if is_terminus1_prompt(step.message):
            return True
    return False


def _dumps(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False)`, without building an encoder for every value (strings, booleans
    and finite numbers, the values of an answer, are written as that encoder writes them)."""
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    if type(value) is int:
        return int.__repr__(value)
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


NO_OUTPUT = "[no terminal output was recorded for this turn]"


Message = dict[str, Any]
"""One message of a row: {role, content}, and `tool_calls` on an assistant turn that called tools or
`tool_call_id` on a tool result."""
_Turn = tuple[str, str, Step | None, dict[str, Any]]


def conversations(steps: list[Step]) -> list[list[Step]]:
    """The steps of each conversation of a run, in order: a run whose conversation outgrew the model's context
    went on in a fresh one (`CONVERSATION_START`); the steps before the first agent turn (system prompt, private
    guidance) open every conversation, as the harness sends them."""
    parts: list[list[Step]] = [[]]
    for step in steps:
        if step.extra.get(CONVERSATION_START) and parts[-1]:
            head = [s for s in parts[0] if s.source == "system"]
            parts.append([*head])
        parts[-1].append(step)
    return parts


def _turns(steps: list[Step], reasoning: bool, terminus1: bool) -> tuple[list[_Turn], int | None, bool]:
    """(role, content, agent step, the message's other fields) of every non-empty turn, the index of the
    first assistant turn (None: no row, `no_steps`) and whether a user message comes before it (else the
    instruction has to be added)."""
    turns: list[_Turn] = []
    for step in training_steps(steps):
        if step.source == "agent" and uses_tools(step):
            turns += _tool_turns(step, reasoning)
        elif step.source == "agent":
            content = assistant_content(step, reasoning, terminus1)
            if content.strip():
                turns.append(("assistant", content, step, {}))
            if step.observation is not None and step.observation.strip():
                turns.append(("user", step.observation, None, {}))
        elif step.message.strip():
            turns.append((step.source, step.message, None, {}))
    first = next((i for i, t in enumerate(turns) if t[0] == "assistant"), None)
    has_user = first is not None and any(t[0] == "user" for t in turns[:first])
    return turns, first, has_user


def _tool_turns(step: Step, reasoning: bool) -> list[_Turn]:
    """An agent turn of tool calls: the assistant message with its `tool_calls` (its text as said, thinking
    out unless `reasoning`), a `tool` message per result tied to a call (an empty one as `NO_OUTPUT`), and the
    output tied to no call as a user message."""
    inline, text = split_thinking(step.message)
    thinking = joined_thinking(step.reasoning, inline)
    if reasoning and thinking:
        text = f"<think>{thinking}</think>\n\n{text}"
    calls = tool_calls(step)
    turns: list[_Turn] = [("assistant", text, step, {"tool_calls": calls})]
    tied, loose = tool_results(step, calls)
    for call_id, result in tied:
        turns.append(("tool", result if result.strip() else NO_OUTPUT, None, {"tool_call_id": call_id}))
    if loose.strip():
        turns.append(("user", loose, None, {}))
    return turns


def _messages(turns: list[_Turn]) -> list[Message]:
    last = max(i for i, t in enumerate(turns) if t[0] == "assistant")
    messages: list[Message] = []
    prev_step: Step | None = None
    for role, content, turn_step, fields in turns[: last + 1]:
        if role == "system" and messages:
            role = "user"
        if messages and role == messages[-1]["role"] and role != "tool":
            if role != "assistant":
                # As a harness sends them: an observation and the messages that follow it, blank-line joined.
                messages[-1]["content"] += "\n\n" + content
                continue
            if (
                prev_step is not None
                and not (prev_step.commands or prev_step.task_complete)
                and not messages[-1].get("tool_calls")
            ):
                messages[-1] = {
                    "role": role,
                    "content": content,
                    **fields,
                }  # the first did nothing: keep the second
                prev_step = turn_step
                continue
            messages.append({"role": "user", "content": NO_OUTPUT})
        messages.append({"role": role, "content": content, **fields})
        if role == "assistant":
            prev_step = turn_step
    return messages


Rows = list[list[Message]]


def _rows(trajectory: Trajectory, instruction: str | None, reasoning: bool) -> tuple[Rows, str | None, bool]:
    """(rows, why there are none, whether the first conversation takes the instruction: `instruction`)."""
    rows: Rows = []
    why = "no_steps"
    takes_instruction = False
    if any(has_media(s) for s in trajectory.steps if not removed_from_training(s)):
        return [], MULTIMODAL, False
    terminus1 = uses_terminus1(trajectory)
    for n, steps in enumerate(conversations(trajectory.steps)):
        turns, first, has_user = _turns(steps, reasoning, terminus1)
        if first is None:
            continue
        if not has_user:
            takes_instruction = takes_instruction or n == 0
            text = instruction if n == 0 else None
            if not text or not text.strip():
                why = "no_instruction"
                continue
            turns.insert(first, ("user", text, None, {}))
        rows.append(_messages(turns))
    return rows, (None if rows else why), takes_instruction


def training_rows(
    trajectory: Trajectory, instruction: str | None = None, reasoning: bool = False
) -> tuple[Rows, str | None]:
    """(rows, None): a row per conversation of the run (one, unless it was handed off), each the messages of
    the conversation's last request as the model saw them followed by its last answer as it returned it; or
    ([], why there is none: `no_steps`, `no_instruction` or `multimodal`). `reasoning`: each answer with its
    thinking.

    The rules chat trainers check: an optional system message, then user and assistant turns alternating,
    starting with the user message that carries the task instruction and ending with an assistant turn, no
    empty contents. So: steps that never train are removed; empty messages and observations are skipped; the
    task instruction (`instruction`, else the trajectory's) becomes the first user message when no user
    message comes before the first agent turn (a run with none is `no_instruction`); consecutive user or
    system messages are joined as the harness joins them and a system message after the start is a user
    message; two assistant turns in a row keep the first only if it did something (then a marker stands for
    its unrecorded output); what follows the last assistant turn (a trailing observation) is dropped. A run
    with no agent turn left is `no_steps`. For a run recorded by this project's Terminus 2 harness a row is
    byte for byte what the endpoint received last (less the private guidance) and what it answered.
    """
    rows, why, _ = _rows(trajectory, instruction or trajectory.instruction, reasoning)
    return rows, why


def training_row(
    trajectory: Trajectory, instruction: str | None = None, reasoning: bool = False
) -> tuple[list[Message], str | None]:
    """The rows of `training_rows` as one list of messages per run: the only row of a run that was never
    handed off (see `training_rows` for a run that was)."""
    rows, why = training_rows(trajectory, instruction, reasoning)
    return [m for row in rows for m in row], why


def stored_training(trajectory: Trajectory) -> tuple[bytes | None, str | None]:
    """What the store keeps of the trajectory's training rows: (their `messages_key`, None), (None,
    `no_steps` or `multimodal`), or (None, None) where a row depends on its task's instruction (no user
    message before the first agent turn: the task's instruction, which may change, comes before the
    trajectory's own)."""
    rows, why, takes_instruction = _rows(trajectory, None, False)
    if takes_instruction:
        return None, None
    if not rows:
        return None, why if why == MULTIMODAL else "no_steps"
    return messages_key([m for row in rows for m in row]), None


KEY_BYTES = 16
"""Size of a training key (a BLAKE2b digest)."""


def key_digest(raw: bytes) -> bytes:
    """The training key of the length-prefixed parts `messages_key` hashes, given all at once."""
    return hashlib.blake2b(raw, digest_size=KEY_BYTES).digest()


def messages_key(messages: list[Message]) -> bytes:
    """Identity of a training conversation: rows with the same key are exact duplicates. BLAKE2b (16 bytes)
    of each message's role and UTF-8 content, each with its length first (no two conversations share them);
    a message's tool calls, or the call its result answers, follow its role after a NUL (no role has one)."""
    digest = hashlib.blake2b(digest_size=KEY_BYTES)
    for message in messages:
        role = message["role"]
        tools = {k: message[k] for k in ("tool_calls", "tool_call_id") if k in message}
        if tools:
            role += "\0" + json.dumps(tools, sort_keys=True, ensure_ascii=False)
        for part in (role, message["content"]):
            raw = part.encode("utf-8", "surrogatepass")
            digest.update(len(raw).to_bytes(8, "little"))
            digest.update(raw)
    return digest.digest()
