"""Selected trajectories streamed whole, with one pass over each table.

`Store.write_trajectories` stores a trajectory's steps and actions together and in the order of the
trajectories themselves, and a plain scan returns rows in storage order. So the trajectories, steps and
actions tables are each read once, in order, as Arrow record batches, and merged trajectory by trajectory:
memory holds one record batch per table, whatever the size of the database. The exact step and action
counts of every selected trajectory check the alignment; a trajectory whose rows are not where expected is
read by id instead (and after a few such, the rest is read in batches by id).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import duckdb
import pyarrow as pa

from rsr_core.models import Trajectory
from rsr_core.store.columns import (
    ACTION_READ_COLUMNS,
    STEP_READ_COLUMNS,
    TRAJECTORY_READ_COLUMNS,
    trajectory_from_rows,
)
from rsr_core.store.export_queries import SELECTED_SQL, read_trajectories, selection_params
from rsr_core.store.sql import sibling

CHUNK_ROWS = 2048
MAX_MISALIGNED = 50
FALLBACK_BATCH = 500


class _Rows:
    """Rows of one table in storage order, taken trajectory by trajectory."""

    def __init__(self, reader: pa.RecordBatchReader):
        self._batches = iter(reader)
        self._rows: list[dict[str, Any]] = []
        self._pos = 0

    def peek(self) -> dict[str, Any] | None:
        """The next row, left in place (None at the end)."""
        while self._pos >= len(self._rows):
            batch = next(self._batches, None)
            if batch is None:
                return None
            self._rows, self._pos = batch.to_pylist(), 0
        return self._rows[self._pos]

    def skip(self) -> None:
        """Pass the next row."""
        self._pos += 1

    def take(self, tid: str, count: int, skippable: set[str]) -> list[dict[str, Any]] | None:
        """The next `count` rows of `tid`, passing rows of `skippable` trajectories; None when another
        trajectory's row comes first (that row stays for its own trajectory)."""
        out: list[dict[str, Any]] = []
        while len(out) < count:
            row = self.peek()
            if row is None:
                return None
            if row["trajectory_id"] == tid:
                out.append(row)
            elif row["trajectory_id"] not in skippable:
                return None
            self._pos += 1
        return out


def _selected_order(cur: duckdb.DuckDBPyConnection, params: dict[str, Any]) -> pa.RecordBatchReader:
    sql = (
        SELECTED_SQL + ", n_actions AS (SELECT trajectory_id, count(*) AS n FROM actions GROUP BY ALL) "
        "SELECT s.trajectory_id, s.n_steps, coalesce(a.n, 0) AS n_actions FROM selected s "
        "LEFT JOIN n_actions a USING (trajectory_id) WHERE s.left_out IS NULL ORDER BY s.row_order"
    )
    # Fetched whole (a few dozen bytes per trajectory) so the joins' hash tables are freed at once.
    return cur.sql(sql, params=params).to_arrow_table().to_reader(CHUNK_ROWS)


def stream_selected(
    cur: duckdb.DuckDBPyConnection,
    kinds: Iterable[str],
    task_ids: Iterable[str] = (),
    include_direct_terminus: bool = True,
    training: bool = True,
    include_scripted: bool = False,
) -> Iterator[Trajectory]:
    """The selected trajectories (those not left out), whole, in storage order."""
    params = selection_params(kinds, task_ids, include_direct_terminus, training, include_scripted)
    cursors = [sibling(cur) for _ in range(4)]  # each stream keeps its result open; `cur` serves fallbacks
    try:
        order = _selected_order(cursors[0], params)
        metas = _Rows(
            cursors[1]
            .sql(f"SELECT {', '.join(TRAJECTORY_READ_COLUMNS)} FROM trajectories")
            .to_arrow_reader(CHUNK_ROWS)
        )
        steps = _Rows(
            cursors[2]
            .sql(f"SELECT trajectory_id, {', '.join(STEP_READ_COLUMNS)} FROM steps")
            .to_arrow_reader(CHUNK_ROWS)
        )
        actions = _Rows(
            cursors[3]
            .sql(f"SELECT trajectory_id, {', '.join(ACTION_READ_COLUMNS)} FROM actions")
            .to_arrow_reader(CHUNK_ROWS)
        )  # fmt: skip
        yield from _merge(cur, order, metas, steps, actions)
    finally:
        for c in cursors:
            c.close()


def _merge(
    cur: duckdb.DuckDBPyConnection, order: pa.RecordBatchReader, metas: _Rows, steps: _Rows, actions: _Rows
) -> Iterator[Trajectory]:
    misaligned: set[str] = set()
    rest: list[str] = []
    for batch in order:
        for tid, n_steps, n_actions in zip(*(c.to_pylist() for c in batch.columns), strict=True):
            if len(misaligned) >= MAX_MISALIGNED or rest:
                rest.append(tid)
                if len(rest) >= FALLBACK_BATCH:
                    yield from read_trajectories(cur, rest)
                    rest = []
                continue
            passed: set[str] = set(misaligned)
            meta = metas.peek()
            while meta is not None and meta["trajectory_id"] != tid:
                passed.add(meta["trajectory_id"])
                metas.skip()
                meta = metas.peek()
            if meta is None:  # not in storage order at all: read the rest by id
                rest.append(tid)
                continue
            metas.skip()
            step_rows = steps.take(tid, n_steps, passed)
            action_rows = actions.take(tid, n_actions, passed) if step_rows is not None else None
            if step_rows is None or action_rows is None:
                misaligned.add(tid)
                yield from read_trajectories(cur, [tid])
                continue
            yield trajectory_from_rows(meta, step_rows, action_rows)
    if rest:
        yield from read_trajectories(cur, rest)
