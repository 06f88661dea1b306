"""What is kept derived from the trajectories, brought up to date at the end of every write of them (`rsr
ingest`, a rewrite job): training keys the store lacks (rsr_core/export/training_keys.py), then the similarity
scores of the tasks whose passed rewrites changed. Neither may fail the write that came before: a failure is said
in one line on stderr, and the next write (or the Similarity page) catches up."""

from __future__ import annotations

import sys

from rsr_core.store import Store


def refresh_after_write(store: Store, processes: int = 1) -> None:
    """The hook at the end of a write of trajectories. What is due is asked first, in two queries, so that a write
    that changed nothing (a re-ingest of known files) loads neither the training rules' readers nor the
    analysis. `processes`: the similarity refresh's (2 lets a command score a large batch on two cores)."""
    keys_due, scores_due = _due(store)
    if keys_due:
        from rsr_core.export.training_keys import store_training_keys

        try:
            store_training_keys(store)
        except Exception as exc:  # noqa: BLE001 - a finished ingest or job stays finished
            print(f"rsr: training keys not stored: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    if scores_due:
        from rsr_core.analysis.similarity_refresh import refresh_after_write as refresh_similarity

        refresh_similarity(store, processes)


def _due(store: Store) -> tuple[bool, bool]:
    """(training keys missing, similarity scores stale); both when that cannot be told (the refreshes then say
    what is wrong, in their own words)."""
    from rsr_core.formats.training import TRAINING_RULE
    from rsr_core.store import similarity_store
    from rsr_core.store.training_keys import unkeyed

    try:
        with store.reading() as cur:
            return bool(unkeyed(cur, TRAINING_RULE, 1)), not similarity_store.is_current(cur)
    except Exception:  # noqa: BLE001 - said by the refreshes below
        return True, True
