"""Keep the stored similarity current: score the pairs of the tasks whose passed rewrites changed, and only
those, then rebuild the `rsr similarity` reports of every metric from the stored pairs.

Runs at the end of `rsr ingest` and of a rewrite job, and in the app's background when the Similarity page
finds the stored scores stale; nothing else scores pairs for a page. Each batch of tasks is read in one use of
the store and written in one transaction, so the file is never held for long, and a batch's fingerprints are
read with its commands: if the data changes meanwhile, the next refresh sees the difference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rsr_core.analysis.pair_metrics import METRICS
from rsr_core.analysis.similarity import summarise_all
from rsr_core.analysis.split_scoring import score_batch
from rsr_core.children import child_pool
from rsr_core.store import Store
from rsr_core.store import similarity_store as stored

BATCH_REWRITES = 2000  # rewrites scored per batch (memory and the time the file is held stay bounded)
Progress = Callable[[int, int], None]

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


@dataclass
class RefreshReport:
    """What a refresh did."""

    scored_tasks: int = 0
    dropped_tasks: int = 0
    pairs: int = 0
    reports: bool = False
    seconds: float = 0.0


def _batches(tasks: list[str], sizes: dict[str, tuple[str, int]], limit: int) -> list[list[str]]:
    out: list[list[str]] = []
    size = 0
    for task in tasks:
        n = sizes.get(task, ("", 0))[1]
        if not out or size + n > limit:
            out.append([])
            size = 0
        out[-1].append(task)
        size += n
    return out


def refresh(
    store: Store,
    progress: Progress | None = None,
    batch_rewrites: int = BATCH_REWRITES,
    processes: int = 1,
) -> RefreshReport:
    """Bring the stored pair scores and reports up to date; `progress(done, total)` after each batch of tasks.

    With `processes` 2, a large batch is scored half in a forked process (`split_scoring`): for commands run
    from a terminal, not for a server's many threads."""
    pool = child_pool(1) if processes > 1 else None  # (its process is forked at its first task, if any)
    try:
        return _refresh(store, progress, batch_rewrites, pool)
    finally:
        if pool is not None:  # not waited for when interrupted: the process ends with this one anyway
            pool.shutdown(wait=False, cancel_futures=True)


def _refresh(
    store: Store, progress: Progress | None, batch_rewrites: int, pool: ProcessPoolExecutor | None
) -> RefreshReport:
    started = time.monotonic()
    report = RefreshReport()
    for _ in range(
        3
    ):  # data written while we score is caught by another round (bounded: a busy writer waits)
        with store.reading() as cur:
            to_score, to_drop = stored.stale(cur)
            sizes = stored.current_fingerprints(cur)
        if not to_score and not to_drop:
            break
        batches = _batches(to_score, sizes, batch_rewrites) or [[]]
        for n, batch in enumerate(batches):
            with store.reading() as cur:
                fingerprints = stored.current_fingerprints(cur)
                rewrites, commands = stored.rewrites_of(cur, batch)
            pairs = score_batch(rewrites, commands, METRICS, pool)
            with store.transaction() as cur:
                mine = {t: fingerprints[t] for t in batch if t in fingerprints}
                gone = [t for t in batch if t not in fingerprints] + (to_drop if n == 0 else [])
                stored.replace_tasks(cur, mine, pairs, gone)
            report.scored_tasks += len(batch)
            report.pairs += len(pairs)
            if progress is not None:
                progress(n + 1, len(batches))
        report.dropped_tasks += len(to_drop)
    report.reports = _refresh_reports(store)
    report.seconds = time.monotonic() - started
    return report


def _refresh_reports(store: Store) -> bool:
    """Rebuild the reports when they were computed for other data; True when rebuilt."""
    with store.reading() as cur:
        overall = stored.overall_fingerprint(cur)
        if set(stored.reports(cur, overall)) == set(METRICS):
            return False
        to_score, to_drop = stored.stale(cur)
        if to_score or to_drop:  # changed since the pairs were stored: the next refresh builds them
            return False
        pairs = stored.pairs(cur, METRICS)
    reports = summarise_all(pairs, METRICS)
    with store.transaction() as cur:
        if stored.overall_fingerprint(cur) != overall:
            return False
        stored.store_reports(cur, overall, reports)
    return True


def is_current(store: Store) -> bool:
    """True when every task's stored scores and the reports match the data."""
    with store.reading() as cur:
        return stored.is_current(cur)


def refresh_after_write(store: Store, processes: int = 1) -> RefreshReport | None:
    """The hook at the end of `rsr ingest` and of a rewrite job: refresh (see `refresh` for `processes`), and on
    failure say so in one line on stderr and go on (what was written stays; the Similarity page or the next
    write refreshes)."""
    import sys

    try:
        return refresh(store, processes=processes)
    except Exception as exc:  # noqa: BLE001 - a refresh must never fail a finished ingest or job
        print(
            f"rsr: similarity scores not refreshed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True
        )
        return None
