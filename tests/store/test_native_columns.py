"""Rows built straight into Arrow buffers in C (`_rows.Columns`) against `pa.array` of the same values: the same
arrays where a column takes its values; refused wherever Arrow would refuse one (the rows are then built in
Python, with Arrow's own error); and nothing left of a trajectory handed back to Python, at any bit of a bitmap."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsr_core.models import Command, Step
from rsr_core.store.arrow_rows import (
    ACTION_SCHEMA,
    COMMAND_SCHEMA,
    SEARCH_TERM_SCHEMA,
    STEP_SCHEMA,
    column_kinds,
    columns_table,
    located_tables,
    native_rows,
)

TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()]

VALUES = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.sampled_from(["\ud800", "a\udfffb", "é", "漢字", ""]),
    st.binary(max_size=8),
    st.integers(),
    st.sampled_from(
        [2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1, 2**63]
    ),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
)


def _native() -> Any:
    fast = native_rows()
    if fast is None:
        pytest.skip("rsr_core.store._rows is not built (no C compiler)")
    return fast


def _cells(values: list[Any]) -> list[Any]:
    return [("NaN",) if isinstance(v, float) and math.isnan(v) else v for v in values]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TYPES), st.lists(VALUES, max_size=20))
def test_a_column_holds_what_arrow_makes_of_its_values_or_refuses(kind: pa.DataType, values: list[Any]):
    fast = _native()
    schema = pa.schema([("v", kind)])
    columns = fast.Columns(column_kinds(schema))
    for value in values:
        columns.append((value,))
    assert len(columns) == len(values)
    try:
        expected = pa.array(values, type=kind)
    except (pa.ArrowException, OverflowError, TypeError, ValueError, UnicodeError):
        assert columns.refused, f"Arrow refuses {values!r} as {kind}; the C column took them"
        return
    if columns.refused:  # a value taken another way than the C column writes: Python builds the rows
        return
    got = columns_table(columns, schema).column("v").combine_chunks()
    got.validate(full=True)
    assert got.type == kind
    assert got.null_count == expected.null_count
    assert _cells(got.to_pylist()) == _cells(expected.to_pylist())


def test_the_plain_values_of_every_kind_are_taken_in_c():
    """The comparison above is not vacuous: the values rows hold are written in C, not refused."""
    fast = _native()
    plain = {
        pa.string(): ["a", None, "é漢"],
        pa.large_string(): ["", "x" * 300, None],
        pa.binary(): [b"\x00\xff", None],
        pa.int32(): [0, -(2**31), 2**31 - 1, None],
        pa.int64(): [2**63 - 1, None, -5],
        pa.float64(): [1.5, math.inf, 3, 2**53, None],
        pa.bool_(): [True, None, False] * 5,
    }
    for kind, values in plain.items():
        schema = pa.schema([("v", kind)])
        columns = fast.Columns(column_kinds(schema))
        columns.extend((v,) for v in values)
        assert not columns.refused, kind
        assert columns_table(columns, schema).column("v").to_pylist() == pa.array(values, kind).to_pylist()


def test_a_value_refused_in_c_gives_arrows_own_error_for_the_trajectory():
    """A trajectory whose instruction holds a lone surrogate: refused by the C column, then built in Python,
    where Arrow refuses it in its own words (the ingest reports the file alone with that error)."""
    from rsr_core.models import Trajectory

    run = Trajectory(trajectory_id="t", harness="terminus-2", instruction="a\udfffb", steps=[])
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        located_tables([run])
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        located_tables([run], native=False)


def test_a_row_of_the_wrong_width_is_an_error():
    fast = _native()
    columns = fast.Columns("sl")
    with pytest.raises(ValueError, match="a tuple of 2 values"):
        columns.append(("a",))
    with pytest.raises(ValueError, match="none of"):
        fast.Columns("sx")


_ROW_VALUES = {
    "s": st.one_of(st.none(), st.text(max_size=6)),
    "S": st.one_of(st.none(), st.text(max_size=6)),
    "i": st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
    "l": st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    "d": st.one_of(st.none(), st.floats(allow_nan=False)),
    "?": st.one_of(st.none(), st.booleans()),
}
SINK_SCHEMAS = (STEP_SCHEMA, ACTION_SCHEMA, COMMAND_SCHEMA, SEARCH_TERM_SCHEMA)


def _rows_of(schema: pa.Schema, n: int) -> st.SearchStrategy[list[tuple]]:
    kinds = column_kinds(schema)
    return st.lists(st.tuples(*[_ROW_VALUES[k] for k in kinds]), min_size=n, max_size=n)


def _sink_rows(n: int) -> st.SearchStrategy[list[list[tuple]]]:
    return st.tuples(*[_rows_of(schema, n) for schema in SINK_SCHEMAS]).map(list)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 19).flatmap(lambda n: st.tuples(_sink_rows(n), _sink_rows(3))))
def test_a_trajectory_handed_back_leaves_the_rows_before_it_as_they_were(rows: tuple[list, list]):
    """Rows already gathered (nulls anywhere, so the cut falls at any bit of a bitmap), then a trajectory whose
    second action the C build does not read: its step (nulls and a set flag in it) and first action are taken
    back, and rows appended after sit right behind the earlier ones, null counts included."""
    fast = _native()
    before, after = rows
    sinks = [fast.Columns(column_kinds(schema)) for schema in SINK_SCHEMAS]
    for sink, earlier in zip(sinks, before, strict=True):
        sink.extend(earlier)
    good = Command(keystrokes="ls\n", duration=1.0)
    bad = Command.model_construct(keystrokes=5, duration=1.0)
    step = Step(index=1, source="agent", message="m", task_complete=True, commands=[good, bad])
    assert fast.trajectory_rows("t", [step], *sinks, False) is None
    assert [len(s) for s in sinks] == [len(b) for b in before]
    for sink, schema, earlier, later in zip(sinks, SINK_SCHEMAS, before, after, strict=True):
        sink.extend(later)
        table = columns_table(sink, schema)
        table.validate(full=True)
        kept = earlier + later
        assert table.to_pylist() == [dict(zip(schema.names, r, strict=True)) for r in kept]
        assert [table.column(i).null_count for i in range(table.num_columns)] == [
            sum(r[i] is None for r in kept) for i in range(table.num_columns)
        ]
