"""Training keys for trajectories stored without them: written before the store kept them (schema version 5),
or under an earlier version of the training rules. Run at the end of every write of trajectories (see
rsr_core/jobs/derived.py); a database written by this version has none to fill in, and the check is one query.
Each batch is read in one use of the store and written in one transaction."""

from __future__ import annotations

import pyarrow as pa

from rsr_core.formats.training import TRAINING_RULE, stored_training
from rsr_core.store import Store
from rsr_core.store import export_queries as eq
from rsr_core.store.sql import registered

BATCH = 500  # trajectories read and keyed per transaction


def _missing(store: Store, limit: int) -> list[str]:
    with store.reading() as cur:
        rows = cur.execute(
            "SELECT trajectory_id FROM trajectories WHERE training_rule IS DISTINCT FROM ? "
            "ORDER BY rowid LIMIT ?",
            [TRAINING_RULE, limit],
        ).fetchall()
    return [r[0] for r in rows]


def store_training_keys(store: Store, batch: int = BATCH) -> int:
    """Key every trajectory that has no key under the current rules; returns how many were keyed."""
    done = 0
    while ids := _missing(store, batch):
        with store.reading() as cur:
            trajectories = eq.read_trajectories(cur, ids)
        keyed = [(t.trajectory_id, *stored_training(t)) for t in trajectories]
        table = pa.table(
            {
                "trajectory_id": pa.array([k[0] for k in keyed], pa.string()),
                "training_key": pa.array([k[1] for k in keyed], pa.binary()),
                "training_why": pa.array([k[2] for k in keyed], pa.string()),
            }
        )
        with store.transaction() as cur, registered(cur, "_training_keys", table) as name:
            cur.execute(
                f"UPDATE trajectories SET training_rule = ?, training_key = k.training_key, "
                f"training_why = k.training_why FROM {name} k WHERE k.trajectory_id = trajectories.trajectory_id",
                [TRAINING_RULE],
            )
        done += len(keyed)
        if len(ids) > len(keyed):  # an id gone meanwhile: never asked for again by this loop
            break
    return done
