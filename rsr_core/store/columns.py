"""Models -> Arrow tables for bulk inserts (column lists, never row-by-row SQL)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

import pyarrow as pa

from rsr_core.formats.commands import split_commands
from rsr_core.formats.training import TRAINING_RULE, stored_training
from rsr_core.models import SCHEMA_VERSION, Command, Step, Task, Trajectory

# Search terms: the words of messages, observations and commands, lower-cased, as maximal runs of
# [a-z0-9_.-/] of 2..64 characters; one row per (term, trajectory). (The same terms as a DuckDB regexp_split
# over lower(), which a database may already hold terms from: Python's lower() agrees with DuckDB's on every
# character that lowers into that class except U+0130, which DuckDB lowers to "i" and Python to "i" + U+0307,
# hence the replace.) Tokenising runs on the UTF-8 bytes: every byte outside the class (all of a non-ASCII
# character's bytes included) becomes a space.
TERM_MIN, TERM_MAX = 2, 64
_TERM_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.-/")
_DELIMIT = bytes(c if c in _TERM_BYTES else 0x20 for c in range(256))


def words(text: str) -> list[str]:
    """Lower-cased word runs of `text`, any length, in order (see the search-term rule above)."""
    raw = text.replace("\u0130", "i").lower().encode("utf-8", "surrogatepass").translate(_DELIMIT)
    return [w.decode("ascii") for w in raw.split()]


def _term_rows(tid: str, texts: list[str], out: list[tuple]) -> None:
    """Append the (term, trajectory) rows of one trajectory's texts to `out`."""
    raw = "\n".join(texts).replace("\u0130", "i").lower().encode("utf-8", "surrogatepass").translate(_DELIMIT)
    terms = sorted(w.decode("ascii") for w in set(raw.split()) if TERM_MIN <= len(w) <= TERM_MAX)
    out.extend([(term, tid) for term in terms])


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
"""`json.dumps(value, ensure_ascii=False, default=str)` without building an encoder each call (a row per step)."""


def _json(value: Any) -> str | None:
    if not value:
        return None
    return _ENCODER.encode(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def usage_of(traj: Trajectory) -> tuple[int | None, int | None, float | None]:
    """(prompt tokens, completion tokens, cost in USD) of a run: the sums over its steps' metrics, else what
    the run's own record says (harbor `agent_result`, Terminal-Bench token totals); None where unknown."""
    prompt = completion = None
    cost = None
    for step in traj.steps:
        if step.prompt_tokens is not None:
            prompt = (prompt or 0) + step.prompt_tokens
        if step.completion_tokens is not None:
            completion = (completion or 0) + step.completion_tokens
        if step.cost_usd is not None:
            cost = (cost or 0.0) + step.cost_usd
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


def trajectory_tables(trajectories: list[Trajectory]) -> dict[str, pa.Table]:
    """Arrow tables for the trajectories, steps, actions, commands and search_terms rows of these trajectories."""
    return located_tables(trajectories)[0]


def located_tables(trajectories: list[Trajectory]) -> tuple[dict[str, pa.Table], list[dict[str, int]]]:
    """`trajectory_tables` plus, per trajectory in order, its number of rows in each table.

    Rows are gathered as tuples and transposed once (zip), then each column becomes one Arrow array.
    """
    counts: list[dict[str, int]] = []
    traj_rows: list[tuple] = []
    step_rows: list[tuple] = []
    act_rows: list[tuple] = []
    cmd_rows: list[tuple] = []
    term_rows: list[tuple] = []
    step_values = attrgetter(*STEP_FIELDS)
    traj_values = attrgetter(*TRAJECTORY_FIELDS)
    for traj in trajectories:
        tid = traj.trajectory_id
        seq = n_actions = n_agent = 0
        texts: list[str] = []
        for step in traj.steps:
            index = step.index
            step_rows.append((tid, index, *step_values(step), _json(step.extra)))
            texts.append(step.message or "")
            if step.observation:
                texts.append(step.observation)
            if step.source != "agent":
                continue
            n_agent += 1
            n_actions += len(step.commands)
            for a_idx, cmd in enumerate(step.commands):
                keys = cmd.keystrokes
                act_rows.append((tid, index, a_idx, cmd.function_name, keys, cmd.duration))
                for text in split_commands(keys):
                    cmd_rows.append((tid, seq, index, a_idx, text))
                    texts.append(text)
                    seq += 1
        before = len(term_rows)
        _term_rows(tid, texts, term_rows)
        counts.append(
            {
                "trajectories": 1,
                "steps": len(traj.steps),
                "actions": n_actions,
                "commands": seq,
                "search_terms": len(term_rows) - before,
            }
        )
        changed = [c.model_dump() for c in traj.changed_paths]
        traj_rows.append(
            (
                *traj_values(traj),
                len(traj.steps),
                seq,
                _json(traj.extra),
                _json(changed),
                SCHEMA_VERSION,
                *usage_of(traj),
                duration_s(traj.started_at, traj.finished_at),
                TRAINING_RULE,
                *stored_training(traj),
                n_agent,
            )
        )
    tables = {
        "trajectories": rows_table(traj_rows, TRAJECTORY_SCHEMA),
        "steps": rows_table(step_rows, STEP_SCHEMA),
        "actions": rows_table(act_rows, ACTION_SCHEMA),
        "commands": rows_table(cmd_rows, COMMAND_SCHEMA),
        "search_terms": rows_table(term_rows, SEARCH_TERM_SCHEMA),
    }
    return tables, counts


def rows_table(rows: list[tuple], schema: pa.Schema) -> pa.Table:
    """An Arrow table from row tuples in schema order."""
    if not rows:
        return schema.empty_table()
    columns = zip(*rows, strict=True)
    return pa.Table.from_arrays(
        [pa.array(col, type=field.type) for col, field in zip(columns, schema, strict=True)], schema=schema
    )


def task_table(tasks: list[Task], content_hash: str | None = None) -> pa.Table:
    """Arrow rows for the tasks table."""
    cols: dict[str, list] = {k: [] for k in TASK_SCHEMA.names}
    for task in tasks:
        for name in TASK_SCHEMA.names:
            if name == "content_hash":
                cols[name].append(content_hash)
            else:
                cols[name].append(getattr(task, name))
    return pa.table(cols, schema=TASK_SCHEMA)


def task_files_table(task: Task) -> pa.Table:
    """Arrow rows for the hidden / environment files of one task."""
    return pa.table(
        {
            "task_id": [task.task_id] * len(task.files),
            "role": [f.role for f in task.files],
            "path": [f.path for f in task.files],
            "content": [f.content for f in task.files],
        },
        schema=pa.schema(
            [
                ("task_id", pa.string()),
                ("role", pa.string()),
                ("path", pa.string()),
                ("content", pa.large_string()),
            ]
        ),
    )


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
_S, _LS = pa.string(), pa.large_string()
TRAJECTORY_SCHEMA = pa.schema(
    [
        (
            n,
            pa.float64()
            if n == "reward"
            else pa.bool_()
            if n in ("scripted", "verifier_tampered")
            else _LS
            if n in ("instruction", "verifier_output", "exception")
            else _S,
        )
        for n in TRAJECTORY_FIELDS
    ]
    + [
        ("n_steps", pa.int32()),
        ("n_commands", pa.int32()),
        ("extra", _LS),
        ("changed_paths", _LS),
        ("schema_version", pa.int32()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("cost_usd", pa.float64()),
        ("duration_s", pa.float64()),
        ("training_rule", pa.int32()),
        ("training_key", pa.binary()),
        ("training_why", _S),
        ("agent_steps", pa.int32()),
    ]
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
_STEP_TYPES = {
    "task_complete": pa.bool_(),
    "harness_control": pa.bool_(),
    "private_guidance": pa.bool_(),
    "copied_context": pa.bool_(),
    "prompt_tokens": pa.int64(),
    "completion_tokens": pa.int64(),
    "cost_usd": pa.float64(),
    "message": _LS,
    "observation": _LS,
    "reasoning": _LS,
    "analysis": _LS,
    "plan": _LS,
}
STEP_SCHEMA = pa.schema(
    [("trajectory_id", _S), ("step_index", pa.int32())]
    + [(n, _STEP_TYPES.get(n, _S)) for n in STEP_FIELDS]
    + [("extra", _LS)]
)
ACTION_SCHEMA = pa.schema(
    [
        ("trajectory_id", _S),
        ("step_index", pa.int32()),
        ("action_index", pa.int32()),
        ("function_name", _S),
        ("keystrokes", _LS),
        ("duration", pa.float64()),
    ]
)
SEARCH_TERM_SCHEMA = pa.schema([("term", _S), ("trajectory_id", _S)])
COMMAND_SCHEMA = pa.schema(
    [
        ("trajectory_id", _S),
        ("seq", pa.int32()),
        ("step_index", pa.int32()),
        ("action_index", pa.int32()),
        ("command", _LS),
    ]
)
TASK_SCHEMA = pa.schema(
    [
        ("task_id", _S),
        ("name", _S),
        ("instruction", _LS),
        ("category", _S),
        ("difficulty", _S),
        ("tags", pa.list_(_S)),
        ("source_format", _S),
        ("path", _S),
        ("docker_image", _S),
        ("cpus", pa.float64()),
        ("memory_mb", pa.int32()),
        ("allow_internet", pa.bool_()),
        ("storage_mb", pa.int32()),
        ("pids_limit", pa.int32()),
        ("max_files", pa.int32()),
        ("cap_add", pa.list_(_S)),
        ("agent_timeout_sec", pa.float64()),
        ("verifier_timeout_sec", pa.float64()),
        ("verifier_allow_changes", pa.list_(_S)),
        ("content_hash", _S),
        ("schema_version", pa.int32()),
    ]
)


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
        fields = {k: row[k] for k in STEP_FIELDS}
        fields["extra"] = json.loads(row["extra"]) if row["extra"] else {}
        built.append(Step(index=row["step_index"], commands=commands.get(row["step_index"], []), **fields))
    return Trajectory(**decode_trajectory_row({k: meta[k] for k in TRAJECTORY_READ_COLUMNS}), steps=built)
