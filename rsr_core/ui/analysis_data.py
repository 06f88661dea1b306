"""The Similarity page's reads: summaries of the stored pair scores (rsr_core/store/similarity_store.py), cached
per version of the stored scores (a review or a job's progress changes the database, not them, and the
summaries of a paper-scale corpus's pairs are slow to read again), and the background refresh that scores
what changed when the page finds them stale.

No page visit scores pairs: `rsr ingest` and rewrite jobs refresh the stored scores when they finish; a page
that still finds stale tasks (data written by an older version, or another tool) starts one refresh thread per
database in this process and shows its progress.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rsr_core.analysis.distribution import group_stats
from rsr_core.analysis.pair_metrics import METRICS
from rsr_core.analysis.similarity_refresh import refresh
from rsr_core.store import analysis_queries
from rsr_core.store import similarity_store as stored
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cursor, cached, cached_by

HEATMAP_TRAJECTORIES = 40  # the heatmap of a larger task shows a seeded sample of its trajectories (each cell
# carries its own hover text)


@cached
def state(cur: Cursor) -> dict[str, int | bool]:
    """tasks (with passed rewrites), stale (tasks whose stored scores are not current), pairs (stored), and
    current (every task's scores and every metric's report match the data)."""
    figures: dict[str, int | bool] = dict(stored.status(cur))
    reports = stored.reports(cur, stored.overall_fingerprint(cur))
    figures["current"] = not figures["stale"] and set(reports) == set(METRICS)
    return figures


@cached
def scores_version(cur: Cursor) -> str:
    """What the stored scores' summaries below are keyed by (`similarity_store.stored_version`): they are read
    again after a refresh, not after every write to the database."""
    return stored.stored_version(cur)


@cached
def summary_table(cur: Cursor, metrics: tuple[str, ...]) -> pd.DataFrame:
    """metric, relation, pairs, mean, ci_low, ci_high from the stored reports (as `rsr similarity` prints)."""
    reports = stored.reports(cur, stored.overall_fingerprint(cur))
    rows = []
    for metric in metrics:
        for relation in ("same", "cross"):
            side = reports[metric][f"{relation}_runbook"]
            ci = side["ci"] or [None, None]
            rows.append({"metric": metric, "relation": relation, "pairs": side["pairs"], "mean": side["mean"],
                         "ci_low": ci[0], "ci_high": ci[1]})  # fmt: skip
    return pd.DataFrame(rows, columns=["metric", "relation", "pairs", "mean", "ci_low", "ci_high"])


@cached_by(scores_version)
def metric_stats(cur: Cursor, metrics: tuple[str, ...]) -> pd.DataFrame:
    """Box statistics and densities of every chosen metric, same vs cross, over all stored pairs."""
    frames = [stored.values(cur, m).assign(group=m) for m in metrics]
    return group_stats(pd.concat(frames, ignore_index=True))


@cached_by(scores_version)
def grouped_stats(cur: Cursor, metric: str, by: str, task_ids: tuple[str, ...] | None = None) -> pd.DataFrame:
    """One metric's statistics per task (of `task_ids`) or per category."""
    long = stored.values(cur, metric, by, list(task_ids) if task_ids is not None else None)
    long = long.rename(columns={"grp": "group"})
    if by == "task_id" and task_ids is not None:
        order = {t: i for i, t in enumerate(task_ids)}
        long = long.sort_values("group", key=lambda s: s.map(order), kind="stable")
    return group_stats(long)


@cached_by(scores_version)
def task_pairs(cur: Cursor) -> pd.DataFrame:
    """task_id, pairs of the tasks with stored pairs, most pairs first."""
    return stored.task_pair_counts(cur)


@cached_by(scores_version)
def median_pairs(cur: Cursor, metric: str, task_ids: tuple[str, ...]) -> pd.DataFrame:
    """Per task and relation, the stored pair closest to the box's median (hover names it, a click opens it)."""
    return analysis_queries.median_pairs(cur, metric, list(task_ids))


@cached_by(scores_version)
def category_median_pairs(cur: Cursor, metric: str) -> pd.DataFrame:
    """Per task category and relation, the stored pair closest to the box's median."""
    return analysis_queries.median_pairs(cur, metric, by="category")


@cached_by(scores_version)
def metric_median_pairs(cur: Cursor, metrics: tuple[str, ...]) -> pd.DataFrame:
    """Per metric and relation, over every stored pair, the pair closest to the box's median."""
    return analysis_queries.median_pairs_of_metrics(cur, list(metrics))


@cached_by(scores_version)
def heatmap_pairs(cur: Cursor, task_id: str, metric: str) -> tuple[pd.DataFrame, int]:
    """One task's pairs for the heatmap (among at most HEATMAP_TRAJECTORIES of its trajectories, a seeded
    sample) and how many trajectories the task has."""
    pairs = stored.pairs(cur, (metric,), task_id)
    ids = pd.unique(pd.concat([pairs["trajectory_a"], pairs["trajectory_b"]]))
    if len(ids) > HEATMAP_TRAJECTORIES:
        keep = set(np.random.default_rng(0).choice(ids, HEATMAP_TRAJECTORIES, replace=False).tolist())
        pairs = pairs[pairs["trajectory_a"].isin(keep) & pairs["trajectory_b"].isin(keep)]
    return pairs, len(ids)


@dataclass
class Refresh:
    """A background refresh of the stored scores of one database."""

    thread: threading.Thread | None = None
    done: int = 0
    total: int = 0
    error: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()


_REFRESHES: dict[str, Refresh] = {}
_GUARD = threading.Lock()


def refresh_job(ctx: AppServices) -> Refresh:
    """The latest background refresh of this database (an idle one when none was started)."""
    with _GUARD:
        return _REFRESHES.setdefault(ctx.settings.db_path, Refresh())


def background_refresh(ctx: AppServices) -> Refresh:
    """The refresh of this database, started now unless one is running (one per database and process)."""
    with _GUARD:
        job = _REFRESHES.setdefault(ctx.settings.db_path, Refresh())
        if job.running:
            return job
        job.done, job.total, job.error = 0, 0, None

        def progress(done: int, total: int) -> None:
            job.done, job.total = done, total

        def work() -> None:
            try:
                refresh(ctx.store, progress)
            except Exception as exc:  # noqa: BLE001 - shown on the page; the next visit tries again
                job.error = f"{type(exc).__name__}: {exc}"

        # Not a daemon: the interpreter waits for it at exit instead of killing it inside DuckDB (which aborts).
        job.thread = threading.Thread(target=work, name="similarity-refresh")
        job.thread.start()
        return job
