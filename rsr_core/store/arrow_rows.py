"""Models -> Arrow tables for bulk inserts (column lists, never row-by-row SQL).

Kept apart from `columns` so that a command that only reads (`rsr list`, `rsr show`) does not load Arrow."""

from __future__ import annotations

import json
from functools import cache
from operator import attrgetter
from types import ModuleType
from typing import Any

import pyarrow as pa

from rsr_core.formats.commands import split_commands
from rsr_core.formats.tool_calls import stored_extra
from rsr_core.formats.training import TRAINING_RULE, confirmation, key_digest, stored_training, uses_terminus1
from rsr_core.models import SCHEMA_VERSION, Step, Task, Trajectory
from rsr_core.store.columns import (
    STEP_FIELDS,
    TERM_DELIMIT,
    TERM_MAX,
    TERM_MIN,
    TRAJECTORY_FIELDS,
    duration_s,
    term_rows,
    usage_of,
)

_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
"""`json.dumps(value, ensure_ascii=False, default=str)` without building an encoder each call (a row per step)."""


def _json(value: Any) -> str | None:
    if not value:
        return None
    return _ENCODER.encode(value)


def _extra_json(step: Step) -> str | None:
    """The stored `extra` column of a step."""
    return _json(stored_extra(step))


@cache
def native_rows() -> ModuleType | None:
    """The C build of the per-step loop below (rsr_core/store/_rows.c), set up; None where the package was
    installed without it (no C compiler), and the rows are built in Python alone."""
    try:
        from rsr_core.store import _rows  # type: ignore[attr-defined]
    except ImportError:
        return None
    _rows.configure(STEP_FIELDS, _extra_json, key_digest, confirmation(), TERM_DELIMIT, TERM_MIN, TERM_MAX)
    return _rows


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


TABLE_SCHEMAS = {
    "trajectories": TRAJECTORY_SCHEMA,
    "steps": STEP_SCHEMA,
    "actions": ACTION_SCHEMA,
    "commands": COMMAND_SCHEMA,
    "search_terms": SEARCH_TERM_SCHEMA,
}
"""The tables of a trajectory's rows, in the order they are built and stored."""
_KIND_LETTERS = {
    str(pa.string()): "s",
    str(pa.large_string()): "S",
    str(pa.binary()): "b",
    str(pa.int32()): "i",
    str(pa.int64()): "l",
    str(pa.float64()): "d",
    str(pa.bool_()): "?",
}
"""The kind letter of `_rows.Columns` for each Arrow type a table's column has."""
TASK_FILES_SCHEMA = pa.schema([("task_id", _S), ("role", _S), ("path", _S), ("content", _LS)])


def trajectory_tables(trajectories: list[Trajectory]) -> dict[str, pa.Table]:
    """Arrow tables for the trajectories, steps, actions, commands and search_terms rows of these trajectories."""
    return located_tables(trajectories)[0]


def located_tables(
    trajectories: list[Trajectory], native: bool = True
) -> tuple[dict[str, pa.Table], list[dict[str, int]]]:
    """`trajectory_tables` plus, per trajectory in order, its number of rows in each table.

    With the C build (`native_rows`, unless `native` is False), a trajectory goes through its `_python_rows`,
    `term_rows` and `stored_training`, and every row is written straight into Arrow buffers (`_rows.Columns`);
    what it does not take on (it says so) is built here and appended to the same buffers. Without it, rows are
    gathered as tuples and each column becomes one Arrow array (`rows_table`). A value the buffers do not take as
    `pa.array` would builds the whole set again without the C build, so that Arrow converts or refuses it.
    """
    fast = native_rows() if native else None
    counts: list[dict[str, int]] = []
    sinks = _sinks(fast)
    traj_rows, step_rows, act_rows, cmd_rows, search_rows = sinks.values()
    traj_values = attrgetter(*TRAJECTORY_FIELDS)
    for traj in trajectories:
        tid = traj.trajectory_id
        done = None
        before = len(search_rows)
        if fast is not None:
            terminus1 = uses_terminus1(traj)
            done = fast.trajectory_rows(
                tid, traj.steps, step_rows, act_rows, cmd_rows, search_rows, terminus1
            )
        if done is None:
            texts, n_actions, seq, n_agent = _python_rows(tid, traj.steps, step_rows, act_rows, cmd_rows)
            term_rows(tid, texts, search_rows)
            usage = usage_of(traj)
            training = stored_training(traj)
        else:
            _, n_actions, seq, n_agent, prompt, completion, cost, training = done
            usage = usage_of(traj, (prompt, completion, cost))
            training = training or stored_training(traj)
        counts.append(
            {
                "trajectories": 1,
                "steps": len(traj.steps),
                "actions": n_actions,
                "commands": seq,
                "search_terms": len(search_rows) - before,
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
                *usage,
                duration_s(traj.started_at, traj.finished_at),
                TRAINING_RULE,
                *training,
                n_agent,
            )
        )
    if any(getattr(rows, "refused", False) for rows in sinks.values()):
        # A value the C columns do not take as Arrow would: Arrow's own conversion, its own errors.
        return located_tables(trajectories, native=False)
    return {name: columns_table(rows, TABLE_SCHEMAS[name]) for name, rows in sinks.items()}, counts


def _sinks(fast: ModuleType | None) -> dict[str, Any]:
    """Where each table's rows go: Arrow buffers built in C (`_rows.Columns`), else lists of row tuples."""
    if fast is None:
        return {name: [] for name in TABLE_SCHEMAS}
    return {name: fast.Columns(kinds) for name, kinds in _table_kinds().items()}


@cache
def _table_kinds() -> dict[str, str]:
    return {name: column_kinds(schema) for name, schema in TABLE_SCHEMAS.items()}


def column_kinds(schema: pa.Schema) -> str:
    """The kind letters of `_rows.Columns` for a schema's columns."""
    return "".join(_KIND_LETTERS[str(field.type)] for field in schema)


def columns_table(rows: Any, schema: pa.Schema) -> pa.Table:
    """An Arrow table of rows gathered as tuples (`rows_table`) or as Arrow buffers in C (`_rows.Columns`)."""
    if isinstance(rows, list):
        return rows_table(rows, schema)
    n = len(rows)
    if not n:
        return schema.empty_table()
    arrays = []
    for field, (nulls, valid, offsets, data) in zip(schema, rows.buffers(), strict=True):
        buffers = [pa.py_buffer(valid) if valid is not None else None]
        if offsets is not None:
            buffers.append(pa.py_buffer(offsets))
        buffers.append(pa.py_buffer(data))
        arrays.append(pa.Array.from_buffers(field.type, n, buffers, null_count=nulls))
    return pa.Table.from_arrays(arrays, schema=schema)


_STEP_VALUES = attrgetter(*STEP_FIELDS)


def _python_rows(
    tid: str, steps: list[Step], step_rows: list[tuple], act_rows: list[tuple], cmd_rows: list[tuple]
) -> tuple[list[str], int, int, int]:
    """Append a trajectory's step, action and command rows; (the texts of its search terms, its number of
    actions, of commands and of agent steps)."""
    seq = n_actions = n_agent = 0
    texts: list[str] = []
    for step in steps:
        index = step.index
        step_rows.append((tid, index, *_STEP_VALUES(step), _extra_json(step)))
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
    return texts, n_actions, seq, n_agent


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
        schema=TASK_FILES_SCHEMA,
    )


def tasks_tables(tasks: list[tuple[Task, str | None]]) -> tuple[pa.Table, pa.Table]:
    """The tasks rows and the task_files rows of these tasks (each with its content hash)."""
    return (
        pa.concat_tables(task_table([t], h) for t, h in tasks),
        pa.concat_tables(task_files_table(t) for t, _ in tasks),
    )


def id_table(column: str, ids: list[str]) -> pa.Table:
    """A one-column table of ids, to join a query against."""
    return pa.table({column: pa.array(ids, pa.string())})
