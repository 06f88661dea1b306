"""Scoring a large batch of tasks on two cores: the later half of its tasks in a second process, the rest here.

A task's pair scores depend on its own rewrites alone (`pair_metrics.fuzzy` sums in the order of the command
texts, so a task scores the same to the last bit whatever is scored beside it), and `similarity.score_pairs`
gives its rows task by task in task order: the rows of the two halves, one after the other, are the rows of the
whole batch. Each half is scored on one thread: the fuzzy and order-aware kernels would otherwise spread each
matrix of a task (a few hundred commands) over every core from both processes at once, and the threads cost
more than they gave (benchmarks/RESULTS.md, "Ingest profile at paper scale").
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa

from rsr_core.analysis.similarity import score_pairs

SPLIT_MIN_COMMANDS = 100_000
"""A batch with fewer commands than this is scored in this process alone: handing half of it to another
process (its rows pickled there and back) would cost more than it saves."""


def halves(rewrites: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The batch's rewrites cut between two tasks into halves of about equal work (a task's work taken as the
    square of its rewrites, as its matrices grow); None when it has one task."""
    rewrites = rewrites.sort_values(["task_id", "trajectory_id"], kind="stable").reset_index(drop=True)
    tasks = rewrites["task_id"].to_numpy(dtype=object)
    starts = np.flatnonzero(np.r_[True, tasks[1:] != tasks[:-1]]) if len(tasks) else np.empty(0, int)
    if len(starts) < 2:
        return None
    done = np.cumsum(np.diff(np.r_[starts, len(tasks)]).astype(np.float64) ** 2)
    task_cut = min(max(int(np.searchsorted(done, done[-1] / 2.0)) + 1, 1), len(starts) - 1)
    row_cut = int(starts[task_cut])
    return rewrites.iloc[:row_cut], rewrites.iloc[row_cut:].reset_index(drop=True)


def score_batch(
    rewrites: pd.DataFrame,
    commands: pa.Table,
    metrics: tuple[str, ...] | list[str],
    pool: ProcessPoolExecutor | None,
    min_commands: int = SPLIT_MIN_COMMANDS,
) -> pd.DataFrame:
    """`score_pairs` of the batch; with a `pool` and at least `min_commands` commands, its later half in the
    pool's process while this one scores the rest. If the other process fails, its half is scored here."""
    cut = halves(rewrites) if pool is not None and commands.num_rows >= min_commands else None
    if cut is None:
        return score_pairs(rewrites, commands, metrics)
    # Each half is given every command of the batch (score_pairs leaves out those of other rewrites): cheaper
    # than filtering them, which copies their texts.
    first, second = cut
    try:
        future = pool.submit(score_pairs, second, commands, metrics, 1)  # type: ignore[union-attr]
    except RuntimeError:  # the pool was shut down or broken before
        return score_pairs(rewrites, commands, metrics)
    here = score_pairs(first, commands, metrics, 1)
    try:
        there = future.result()
    except Exception:  # noqa: BLE001 - a process that died or failed: its half is scored here instead
        there = score_pairs(second, commands, metrics, 1)
    if there.empty or here.empty:  # (a half of single-rewrite tasks has no pairs; its empty frame adds none)
        return there if here.empty and not there.empty else here
    return pd.concat([here, there], ignore_index=True)
