"""What is kept derived from the trajectories, brought up to date at the end of every write of them (`rsr
ingest`, a rewrite job): training keys the store lacks (rsr_core/export/training_keys.py), then the similarity
scores of the tasks whose passed rewrites changed. Neither may fail the write that came before: a failure is said
in one line on stderr, and the next write (or the Similarity page) catches up."""

from __future__ import annotations

import sys

from rsr_core.store import Store


def refresh_after_write(store: Store) -> None:
    """The hook at the end of a write of trajectories."""
    from rsr_core.analysis.similarity_refresh import refresh_after_write as refresh_similarity
    from rsr_core.export.training_keys import store_training_keys

    try:
        store_training_keys(store)
    except Exception as exc:  # noqa: BLE001 - a finished ingest or job stays finished
        print(f"rsr: training keys not stored: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    refresh_similarity(store)
