"""The one schema of every row export (SFT JSONL, ShareGPT, Parquet, the `hf` directory), declared here and
nowhere else: the writers build their rows and Arrow schemas from it and the dataset card its Hugging Face
`dataset_info.features`.

A schema that depends on the rows breaks the tools that combine files: `datasets` takes the types of the first
file it reads and casts the others to them, so a column that is null in every row of one export (no rewrites: no
`runbook_id`) cannot take another export's strings, and Parquet's `large_string` is not JSON's `string`. So text
is always `string`, and a text column is never null: an absent id is the empty string, which JSON carries with
its type. Only `reward` (never verified, in `--all` exports) can be null.

A chat message always carries `tool_calls` (a list, empty but on an assistant turn that called tools, each call
OpenAI's {id, type, function {name, arguments}} with `arguments` a JSON string) and `tool_call_id` (the call a
`tool` result answers, else ""), and the row its `tools` (the tool list as a JSON string, "[]" for none): a
value whose shape varies from tool to tool is text, so every row has the same types. The one exception is
forced by JSON: a list empty in every row of a file has no element type (`datasets` loads it as a list of
nulls), so an export holding no tool call at all types `tool_calls` that way in every format and in its card
(`UNTYPED_CALLS`) — a JSONL and a Parquet export of the same rows then load alike and concatenate as they are,
and such a dataset takes an export with calls after `cast` to the other's features.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from rsr_core.formats.tool_calls import tool_list
from rsr_core.models import Trajectory

Dtype = Literal["string", "float64"]
_ARROW: dict[Dtype, pa.DataType] = {"string": pa.string(), "float64": pa.float64()}


@dataclass(frozen=True)
class Column:
    """One column outside the conversation: its name (the trajectory field it comes from), type and meaning."""

    name: str
    dtype: Dtype
    description: str


COLUMNS: tuple[Column, ...] = (
    Column("task_id", "string", "task id (empty when the run names none)"),
    Column("trajectory_id", "string", "the run the row comes from (a handed-off run gives several rows)"),
    Column(
        "source_trajectory_id", "string", "the discovery run a rewrite was planned from (empty otherwise)"
    ),
    Column("runbook_id", "string", "the runbook a rewrite followed (empty otherwise)"),
    Column(
        "reward", "float64", "verifier reward (1.0 passed; null only for a run never verified, with --all)"
    ),
    Column("kind", "string", "rewrite, discovery or eval"),
    Column("harness", "string", "harness that ran it (terminus-2 for every training row)"),
    Column("model", "string", "model that answered (empty when unknown)"),
    Column(
        "tools",
        "string",
        'tools the conversation called, as a JSON list of function definitions ("[]": none)',
    ),
)
"""The columns every row carries beside its conversation, in this order."""

Conversation = Literal["messages", "conversations"]
MESSAGE_FIELDS: dict[Conversation, tuple[str, ...]] = {
    "messages": ("role", "content", "tool_calls", "tool_call_id"),
    "conversations": ("from", "value"),
}
"""The fields of one turn: chat `messages` {role, content, tool_calls, tool_call_id}, or ShareGPT
`conversations` {from, value}."""
TOOL_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
"""One call of an assistant turn, OpenAI's shape."""
SHAREGPT_ROLES = {
    "system": "system",
    "user": "human",
    "assistant": "gpt",
    "function_call": "function_call",
    "tool": "observation",
}
"""ShareGPT's `from` of each role (LLaMA-Factory's tags: a tool call is `function_call`, its result
`observation`)."""


class SchemaError(ValueError):
    """A row does not fit the declared schema (a programming error: the schema must be extended first)."""


UNTYPED_CALLS = pa.list_(pa.null())
"""`tool_calls` of an export holding no tool call: what JSON's always-empty list loads as."""


def _field_type(name: str, calls: bool) -> pa.DataType:
    if name == "tool_calls":
        return pa.list_(TOOL_CALL) if calls else UNTYPED_CALLS
    return pa.string()


def arrow_schema(conversation: Conversation = "messages", calls: bool = True) -> pa.Schema:
    """The Arrow schema of the rows (Parquet writes it; JSON rows load as it); `calls`: the export holds a tool
    call (else `tool_calls` is a list of nulls, see the module's docstring)."""
    turn = pa.struct([(name, _field_type(name, calls)) for name in MESSAGE_FIELDS[conversation]])
    return pa.schema([(conversation, pa.list_(turn))] + [(c.name, _ARROW[c.dtype]) for c in COLUMNS])


def has_calls(messages: list[dict[str, Any]]) -> bool:
    """Does a row's conversation hold a tool call?"""
    return any(m.get("tool_calls") for m in messages)


def _yaml_field(name: str, dtype: pa.DataType, indent: str) -> list[str]:
    """A feature of `dataset_info.features` (a string, a list of nulls or of structs, a struct), in YAML lines."""
    if dtype == UNTYPED_CALLS:
        return [f"{indent}- name: {name}", f"{indent}  list: 'null'"]
    if isinstance(dtype, pa.ListType):
        lines = [f"{indent}- name: {name}", f"{indent}  list:"]
        for field in dtype.value_type:
            lines += _yaml_field(field.name, field.type, indent + "  ")
        return lines
    if isinstance(dtype, pa.StructType):
        lines = [f"{indent}- name: {name}", f"{indent}  struct:"]
        for field in dtype:
            lines += _yaml_field(field.name, field.type, indent + "  ")
        return lines
    return [f"{indent}- name: {name}", f"{indent}  dtype: string"]


def features_yaml(conversation: Conversation = "messages", calls: bool = True) -> list[str]:
    """`dataset_info.features` of a Hugging Face dataset card (YAML lines, indented under `dataset_info:`)."""
    lines = ["  features:"]
    lines += _yaml_field(conversation, arrow_schema(conversation, calls).field(conversation).type, "  ")
    for c in COLUMNS:
        lines += [f"  - name: {c.name}", f"    dtype: {c.dtype}"]
    return lines


def sharegpt_turns(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """ShareGPT turns as LLaMA-Factory reads tools: an assistant turn's calls as one `function_call` turn whose
    value is the JSON of its calls ({name, arguments}; a list for several), and the results that follow (with
    any output after them) as one `observation` turn."""
    turns: list[dict[str, str]] = []
    for m in messages:
        role, value = m["role"], m["content"]
        calls = m.get("tool_calls") or []
        if role == "assistant" and calls:
            said = [
                {"name": c["function"]["name"], "arguments": _loaded(c["function"]["arguments"])}
                for c in calls
            ]
            role, value = "function_call", json.dumps(said[0] if len(said) == 1 else said, ensure_ascii=False)
        elif role == "user" and turns and turns[-1]["from"] == "observation":
            role = "tool"
        if role == "tool" and turns and turns[-1]["from"] == "observation":
            turns[-1]["value"] += "\n\n" + value
            continue
        turns.append({"from": SHAREGPT_ROLES[role], "value": value})
    return turns


def _loaded(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _turns(messages: list[dict[str, Any]], conversation: Conversation) -> list[dict[str, Any]]:
    for message in messages:
        extra = set(message) - set(MESSAGE_FIELDS["messages"])
        if extra:
            raise SchemaError(
                f"message field(s) {', '.join(sorted(extra))} not in the export schema (rsr_core/export/schema.py)"
            )
    if conversation == "conversations":
        return sharegpt_turns(messages)
    return [
        {
            "role": m["role"],
            "content": m["content"],
            "tool_calls": m.get("tool_calls") or [],
            "tool_call_id": m.get("tool_call_id") or "",
        }
        for m in messages
    ]


def _tools(trajectory: Trajectory, messages: list[dict[str, Any]]) -> str:
    names = [c["function"]["name"] for m in messages for c in m.get("tool_calls") or []]
    return tool_list(trajectory, names) if names else "[]"


def row(
    trajectory: Trajectory, messages: list[dict[str, Any]], conversation: Conversation = "messages"
) -> dict[str, Any]:
    """One exported row, in the schema's column order, every column present and typed as declared."""
    out: dict[str, Any] = {conversation: _turns(messages, conversation)}
    for c in COLUMNS:
        if c.name == "tools":
            out[c.name] = _tools(trajectory, messages)
            continue
        value = getattr(trajectory, c.name)
        if c.dtype == "string":
            out[c.name] = "" if value is None else str(value)
        else:
            out[c.name] = None if value is None else float(value)
    return out
