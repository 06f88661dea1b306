"""The one schema of every row export (SFT JSONL, ShareGPT, Parquet, the `hf` directory), declared here and
nowhere else: the writers build their rows and Arrow schemas from it and the dataset card its Hugging Face
`dataset_info.features`.

A schema that depends on the rows breaks the tools that combine files: `datasets` takes the types of the first
file it reads and casts the others to them, so a column that is null in every row of one export (no rewrites: no
`runbook_id`) cannot take another export's strings, and Parquet's `large_string` is not JSON's `string`. So text
is always `string`, and a text column is never null: an absent id is the empty string, which JSON carries with
its type. Only `reward` (never verified, in `--all` exports) can be null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from rsr_core.export.messages import SHAREGPT_ROLES
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
)
"""The columns every row carries beside its conversation, in this order."""

Conversation = Literal["messages", "conversations"]
MESSAGE_FIELDS: dict[Conversation, tuple[str, str]] = {
    "messages": ("role", "content"),
    "conversations": ("from", "value"),
}
"""The fields of one turn: chat `messages` {role, content}, or ShareGPT `conversations` {from, value}."""


class SchemaError(ValueError):
    """A row does not fit the declared schema (a programming error: the schema must be extended first)."""


def arrow_schema(conversation: Conversation = "messages") -> pa.Schema:
    """The Arrow schema of the rows (Parquet writes it; JSON rows load as it)."""
    turn = pa.struct([(name, pa.string()) for name in MESSAGE_FIELDS[conversation]])
    return pa.schema([(conversation, pa.list_(turn))] + [(c.name, _ARROW[c.dtype]) for c in COLUMNS])


def features_yaml(conversation: Conversation = "messages") -> list[str]:
    """`dataset_info.features` of a Hugging Face dataset card (YAML lines, indented under `dataset_info:`)."""
    lines = ["  features:", f"  - name: {conversation}", "    list:"]
    for name in MESSAGE_FIELDS[conversation]:
        lines += [f"    - name: {name}", "      dtype: string"]
    for c in COLUMNS:
        lines += [f"  - name: {c.name}", f"    dtype: {c.dtype}"]
    return lines


def _turns(messages: list[dict[str, str]], conversation: Conversation) -> list[dict[str, str]]:
    for message in messages:
        extra = set(message) - set(MESSAGE_FIELDS["messages"])
        if extra:
            raise SchemaError(
                f"message field(s) {', '.join(sorted(extra))} not in the export schema (rsr_core/export/schema.py)"
            )
    if conversation == "conversations":
        return [{"from": SHAREGPT_ROLES[m["role"]], "value": m["content"]} for m in messages]
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def row(
    trajectory: Trajectory, messages: list[dict[str, str]], conversation: Conversation = "messages"
) -> dict[str, Any]:
    """One exported row, in the schema's column order, every column present and typed as declared."""
    out: dict[str, Any] = {conversation: _turns(messages, conversation)}
    for c in COLUMNS:
        value = getattr(trajectory, c.name)
        if c.dtype == "string":
            out[c.name] = "" if value is None else str(value)
        else:
            out[c.name] = None if value is None else float(value)
    return out
