"""The stored training keys of trajectories (migration 4): which lack one under the current training rules, and
writing the keys worked out for them (rsr_core/export/training_keys.py works them out)."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from rsr_core.store.sql import registered


def unkeyed(cur: duckdb.DuckDBPyConnection, rule: int, limit: int) -> list[str]:
    """Up to `limit` trajectories whose key was not worked out under training rules `rule`, oldest first."""
    rows = cur.execute(
        "SELECT trajectory_id FROM trajectories WHERE training_rule IS DISTINCT FROM ? ORDER BY rowid LIMIT ?",
        [rule, limit],
    ).fetchall()
    return [r[0] for r in rows]


def set_training_keys(
    cur: duckdb.DuckDBPyConnection, rule: int, keyed: list[tuple[str, bytes | None, str | None]]
) -> None:
    """Store (trajectory_id, training_key, training_why) worked out under training rules `rule`."""
    table = pa.table(
        {
            "trajectory_id": pa.array([k[0] for k in keyed], pa.string()),
            "training_key": pa.array([k[1] for k in keyed], pa.binary()),
            "training_why": pa.array([k[2] for k in keyed], pa.string()),
        }
    )
    with registered(cur, "_training_keys", table) as name:
        cur.execute(
            f"UPDATE trajectories SET training_rule = ?, training_key = k.training_key, "
            f"training_why = k.training_why FROM {name} k WHERE k.trajectory_id = trajectories.trajectory_id",
            [rule],
        )
