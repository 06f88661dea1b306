"""Training keys for trajectories stored without them: written before the store kept them (schema version 5),
or under an earlier version of the training rules. Run at the end of every write of trajectories (see
rsr_core/jobs/derived.py); a database written by this version has none to fill in, and the check is one query.
Each batch is read in one use of the store and written in one transaction."""

from __future__ import annotations

from rsr_core.formats.training import TRAINING_RULE, stored_training
from rsr_core.store import Store
from rsr_core.store import export_queries as eq
from rsr_core.store.training_keys import set_training_keys, unkeyed

BATCH = 500  # trajectories read and keyed per transaction


def store_training_keys(store: Store, batch: int = BATCH) -> int:
    """Key every trajectory that has no key under the current rules; returns how many were keyed."""
    done = 0
    while True:
        with store.reading() as cur:
            ids = unkeyed(cur, TRAINING_RULE, batch)
            trajectories = eq.read_trajectories(cur, ids) if ids else []
        if not ids:
            break
        keyed = [(t.trajectory_id, *stored_training(t)) for t in trajectories]
        with store.transaction() as cur:
            set_training_keys(cur, TRAINING_RULE, keyed)
        done += len(keyed)
        if len(ids) > len(keyed):  # an id gone meanwhile: never asked for again by this loop
            break
    return done
