"""Arrow rows of parsed trajectories, built where they were parsed and sliced per file when stored.

Ingest parses files in worker processes; turning the parsed steps into Arrow columns there (instead of in
the one process that writes) keeps the writer free, and a chunk's tables cross the process boundary as a
few Arrow buffers rather than as thousands of model objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from rsr_core.models import Trajectory
from rsr_core.store import columns

TABLES = ("trajectories", "steps", "actions", "commands")


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
                idx = part.schema.get_field_index("trajectory_id")
                field = part.schema.field(idx)
                part = part.set_column(idx, field, pa.array([trajectory_id] * part.num_rows, field.type))
            out[name] = part
        return out


def build_rows(trajectories: list[Trajectory]) -> list[Rows]:
    """Build the tables of these trajectories once and locate each one's rows.

    The models' steps are dropped afterwards: the rows hold them, and models without steps are cheap to send
    between processes.
    """
    tables = columns.trajectory_tables(trajectories)
    n_commands = tables["trajectories"].column("n_commands").to_pylist()
    offsets = dict.fromkeys(TABLES, 0)
    out = []
    for traj, commands in zip(trajectories, n_commands, strict=True):
        lengths = {
            "trajectories": 1,
            "steps": len(traj.steps),
            "actions": sum(len(s.commands) for s in traj.steps if s.source == "agent"),
            "commands": commands,
        }
        out.append(Rows(tables, dict(offsets), lengths, traj.trajectory_id))
        for name in TABLES:
            offsets[name] += lengths[name]
        traj.steps = []
    return out


def concat(parts: list[dict[str, pa.Table]]) -> dict[str, pa.Table]:
    """One contiguous table per name from many trajectories' rows.

    Contiguous because DuckDB pays per Arrow chunk: inserting 500 one-trajectory chunks costs ~50x more than
    one chunk of the same rows.
    """
    if not parts:
        return columns.trajectory_tables([])
    return {name: pa.concat_tables([p[name] for p in parts]).combine_chunks() for name in TABLES}
