"""A Parquet export types `tool_calls` as JSON loads it until a row holds a call; the rows written before that
one are carried over into the declared type of calls, value for value, and an abort leaves nothing behind."""

from __future__ import annotations

import pyarrow.parquet as pq

from rsr_core.export import schema
from rsr_core.export.writers import ParquetRowWriter
from rsr_core.models import Trajectory

PLAIN = [{"role": "user", "content": "list the files"}, {"role": "assistant", "content": "ls"}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "Bash", "arguments": '{"command": "ls"}'}}
CALLED = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "content": "a.txt", "tool_call_id": "call_1"},
]


def _write(out, rows: list[list[dict]]) -> ParquetRowWriter:
    writer = ParquetRowWriter(out, force=False, row_group_rows=1)  # a row group per row
    for i, messages in enumerate(rows):
        writer.write(Trajectory(trajectory_id=f"t{i}"), messages, None)
    return writer


def test_rows_before_the_first_call_are_carried_into_the_typed_file(tmp_path):
    out = tmp_path / "rows.parquet"
    rows = [PLAIN, PLAIN, CALLED, PLAIN]
    writer = _write(out, rows)
    assert writer.calls
    writer.close()
    table = pq.read_table(out)
    assert table.schema.equals(schema.arrow_schema())
    expected = [schema.row(Trajectory(trajectory_id=f"t{i}"), m) for i, m in enumerate(rows)]
    assert table.to_pylist() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet"]  # no temporary left


def test_rows_without_a_call_keep_the_untyped_calls(tmp_path):
    out = tmp_path / "rows.parquet"
    writer = _write(out, [PLAIN, PLAIN])
    assert not writer.calls
    writer.close()
    assert pq.read_table(out).schema.equals(schema.arrow_schema(calls=False))


def test_an_abort_after_the_switch_leaves_nothing(tmp_path):
    writer = _write(tmp_path / "rows.parquet", [PLAIN, CALLED])
    writer.abort()
    assert list(tmp_path.iterdir()) == []
