"""The stored columns of trajectories and steps: their names, the search terms of a text, the values derived
from a model (usage, duration), and a stored row read back into a model. The Arrow side is `arrow_rows`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from rsr_core.formats.tool_calls import read_extra
from rsr_core.models import Command, Step, Trajectory

# Search terms: the words of messages, observations and commands, lower-cased, as maximal runs of
# [a-z0-9_.-/] of 2..64 characters; one row per (term, trajectory). (The same terms as a DuckDB regexp_split
# over lower(), which a database may already hold terms from: Python's lower() agrees with DuckDB's on every
# character that lowers into that class except U+0130, which DuckDB lowers to "i" and Python to "i" + U+0307,
# hence the replace.) Tokenising runs on the UTF-8 bytes: every byte outside the class (all of a non-ASCII
# character's bytes included) becomes a space.
TERM_MIN, TERM_MAX = 2, 64
_TERM_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.-/")
TERM_DELIMIT = bytes(c if c in _TERM_BYTES else 0x20 for c in range(256))
"""The translation table of the rule: a byte of a term stays, any other becomes a space."""


def words(text: str) -> list[str]:
    """Lower-cased word runs of `text`, any length, in order (see the search-term rule above)."""
    raw = text.replace("\u0130", "i").lower().encode("utf-8", "surrogatepass").translate(TERM_DELIMIT)
    return [w.decode("ascii") for w in raw.split()]


def term_rows(tid: str, texts: list[str], out: list[tuple]) -> None:
    """Append the (term, trajectory) rows of one trajectory's texts to `out`."""
    raw = (
        "\n".join(texts)
        .replace("\u0130", "i")
        .lower()
        .encode("utf-8", "surrogatepass")
        .translate(TERM_DELIMIT)
    )
    terms = sorted(w.decode("ascii") for w in set(raw.split()) if TERM_MIN <= len(w) <= TERM_MAX)
    out.extend([(term, tid) for term in terms])


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def step_usage(steps: list[Step]) -> tuple[int | None, int | None, float | None]:
    """(prompt tokens, completion tokens, cost in USD) summed over the steps that record them; None where none
    does."""
    prompt = completion = None
    cost = None
    for step in steps:
        if step.prompt_tokens is not None:
            prompt = (prompt or 0) + step.prompt_tokens
        if step.completion_tokens is not None:
            completion = (completion or 0) + step.completion_tokens
        if step.cost_usd is not None:
            cost = (cost or 0.0) + step.cost_usd
    return prompt, completion, cost


def usage_of(
    traj: Trajectory, sums: tuple[int | None, int | None, float | None] | None = None
) -> tuple[int | None, int | None, float | None]:
    """(prompt tokens, completion tokens, cost in USD) of a run: the sums over its steps' metrics (`sums`, when
    they were taken already), else what the run's own record says (harbor `agent_result`, Terminal-Bench token
    totals); None where unknown."""
    prompt, completion, cost = step_usage(traj.steps) if sums is None else sums
    found = traj.extra.get("agent_result")
    result: dict[str, Any] = found if isinstance(found, dict) else {}
    if prompt is None:
        value = _number(result.get("n_input_tokens", traj.extra.get("total_input_tokens")))
        prompt = int(value) if value is not None else None
    if completion is None:
        value = _number(result.get("n_output_tokens", traj.extra.get("total_output_tokens")))
        completion = int(value) if value is not None else None
    if cost is None:
        cost = _number(result.get("cost_usd"))
    return prompt, completion, cost


def parse_time(text: str | None) -> datetime | None:
    """An ISO 8601 timestamp (a trailing Z allowed), None when absent or unreadable."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def duration_s(started: str | None, finished: str | None) -> float | None:
    """Seconds between two ISO timestamps (None when either is unknown, or the order is wrong)."""
    a, b = parse_time(started), parse_time(finished)
    if a is None or b is None or b < a:
        return None
    return (b - a).total_seconds()


TRAJECTORY_FIELDS = (
    "trajectory_id",
    "session_id",
    "task_id",
    "kind",
    "harness",
    "agent_name",
    "agent_version",
    "model",
    "reward",
    "source_trajectory_id",
    "runbook_id",
    "job_id",
    "instruction",
    "started_at",
    "finished_at",
    "exception",
    "verifier_output",
    "scripted",
    "verifier_tampered",
    "origin",
    "content_hash",
)
TRAJECTORY_COLUMNS = (
    *TRAJECTORY_FIELDS,
    "n_steps",
    "n_commands",
    "extra",
    "changed_paths",
    "schema_version",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "duration_s",
    "training_rule",
    "training_key",
    "training_why",
    "agent_steps",
)
STEP_FIELDS = (
    "source",
    "message",
    "analysis",
    "plan",
    "reasoning",
    "observation",
    "task_complete",
    "harness_control",
    "private_guidance",
    "copied_context",
    "model_name",
    "timestamp",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
)
STEP_COLUMNS = ("trajectory_id", "step_index", *STEP_FIELDS, "extra")


DERIVED_COLUMNS = frozenset(
    {"n_steps", "n_commands", "prompt_tokens", "completion_tokens", "cost_usd", "duration_s"}
)


def decode_trajectory_row(row: dict[str, Any]) -> dict[str, Any]:
    """A stored trajectories row (as read with the read side's field list) -> Trajectory fields (no steps).

    The JSON columns are decoded; row counts that are not model fields are dropped."""
    meta = {k: v for k, v in row.items() if k not in DERIVED_COLUMNS}
    meta["extra"] = json.loads(meta["extra"]) if meta.get("extra") else {}
    meta["changed_paths"] = json.loads(meta["changed_paths"]) if meta.get("changed_paths") else []
    meta["verifier_tampered"] = bool(meta.get("verifier_tampered"))
    return meta


# What the read side selects: the trajectory fields as written, their JSON columns and the step count; every step
# column but the trajectory id. (`trajectory_from_rows` turns such rows back into models.)
TRAJECTORY_READ_COLUMNS = (*TRAJECTORY_FIELDS, "extra", "changed_paths", "n_steps")
STEP_READ_COLUMNS = ("step_index", *STEP_FIELDS, "extra")
ACTION_READ_COLUMNS = ("step_index", "function_name", "keystrokes", "duration")


def trajectory_from_rows(
    meta: dict[str, Any], steps: Iterable[dict[str, Any]], actions: Iterable[dict[str, Any]]
) -> Trajectory:
    """The one row -> model mapper: a trajectories row (TRAJECTORY_READ_COLUMNS), its steps rows
    (STEP_READ_COLUMNS) and its actions rows (ACTION_READ_COLUMNS); extra keys (e.g. trajectory_id) are ignored."""
    commands: dict[int, list[Command]] = {}
    for a in actions:
        commands.setdefault(a["step_index"], []).append(
            Command(
                keystrokes=a["keystrokes"],
                duration=a["duration"],
                function_name=a["function_name"] or "bash_command",
            )
        )
    built = []
    for row in sorted(steps, key=lambda r: r["step_index"]):
        index = row["step_index"]
        fields = {k: row[k] for k in STEP_FIELDS}
        made = commands.get(index, [])
        extra = json.loads(row["extra"]) if row["extra"] else {}
        fields["extra"] = read_extra(extra, index, row["source"], made, bool(row["task_complete"]))
        built.append(Step(index=index, commands=made, **fields))
    return Trajectory(**decode_trajectory_row({k: meta[k] for k in TRAJECTORY_READ_COLUMNS}), steps=built)
