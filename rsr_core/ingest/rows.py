"""Arrow rows of parsed trajectories, built where they were parsed and sliced per file when stored.

Ingest parses files in worker processes; turning the parsed steps into Arrow columns there (instead of in
the one process that writes) keeps the writer free, and a chunk's tables cross the process boundary as a
few Arrow buffers rather than as thousands of model objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from rsr_core.models import Trajectory
from rsr_core.store import arrow_rows

TABLES = tuple(arrow_rows.TABLE_SCHEMAS)


@dataclass
class Rows:
    """Where one trajectory's rows sit in the tables of the chunk it was parsed in."""

    tables: dict[str, pa.Table]
    """The chunk's tables (shared by every trajectory of the chunk)."""
    offsets: dict[str, int]
    """First row of this trajectory in each table."""
    lengths: dict[str, int]
    """Rows of this trajectory in each table."""
    trajectory_id: str
    """The id the rows were built with."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """Trajectory-table values set after the rows were built (an instruction filled in from its task)."""

    @property
    def steps(self) -> int:
        """Number of steps."""
        return self.lengths["steps"]

    def take(self, trajectory_id: str) -> dict[str, pa.Table]:
        """This trajectory's rows (zero-copy slices), under `trajectory_id` if it was renamed."""
        out = {}
        for name in TABLES:
            part = self.tables[name].slice(self.offsets[name], self.lengths[name])
            if trajectory_id != self.trajectory_id:
                part = _set(part, "trajectory_id", trajectory_id)
            if name == "trajectories":
                for column, value in self.overrides.items():
                    part = _set(part, column, value)
            out[name] = part
        return out

    def follows(self, other: Rows) -> bool:
        """Do this trajectory's rows come right after `other`'s in the same chunk tables?"""
        return self.tables is other.tables and all(
            self.offsets[n] == other.offsets[n] + other.lengths[n] for n in TABLES
        )


def _set(part: pa.Table, column: str, value: Any) -> pa.Table:
    """`part` with every row's `column` set to `value`."""
    idx = part.schema.get_field_index(column)
    column_field = part.schema.field(idx)
    return part.set_column(idx, column_field, pa.array([value] * part.num_rows, column_field.type))


def build_rows(trajectories: list[Trajectory]) -> list[Rows]:
    """Build the tables of these trajectories once and locate each one's rows.

    The models' steps are dropped afterwards: the rows hold them, and models without steps are cheap to send
    between processes.
    """
    tables, counts = arrow_rows.located_tables(trajectories)
    offsets = dict.fromkeys(TABLES, 0)
    out = []
    for traj, lengths in zip(trajectories, counts, strict=True):
        out.append(Rows(tables, dict(offsets), lengths, traj.trajectory_id))
        for name in TABLES:
            offsets[name] += lengths[name]
        traj.steps = []
    return out


def gather(rows: list[tuple[Rows, str]]) -> dict[str, pa.Table]:
    """One table per name holding these trajectories' rows, each under the id it is stored with.

    Runs of trajectories that sit next to each other in one chunk's tables become one slice, so DuckDB reads
    a few large Arrow chunks (it pays a cost per chunk, which a slice per trajectory would multiply).
    """
    if not rows:
        return arrow_rows.trajectory_tables([])
    parts: list[dict[str, pa.Table]] = []
    run_start: Rows | None = None
    run_last: Rows | None = None
    run_lengths: dict[str, int] = {}

    def close() -> None:
        if run_start is not None:
            parts.append({n: run_start.tables[n].slice(run_start.offsets[n], run_lengths[n]) for n in TABLES})

    for r, trajectory_id in rows:
        if trajectory_id != r.trajectory_id or r.overrides:
            close()
            run_start = run_last = None
            parts.append(r.take(trajectory_id))
            continue
        if run_last is not None and r.follows(run_last):
            run_lengths = {n: run_lengths[n] + r.lengths[n] for n in TABLES}
        else:
            close()
            run_start, run_lengths = r, dict(r.lengths)
        run_last = r
    close()
    return {name: pa.concat_tables([p[name] for p in parts]) for name in TABLES}
