"""Unbiased pass@k (the README's Analysis section), per group of runs.

Per (group, task) with n runs and c successes (reward >= 1.0; an unverified run is a failure),
pass@k = 1 - C(n-c, k) / C(n, k), averaged over the group's tasks with n >= k.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from rsr_core.store.rules import SOLVED_AT

GroupBy = Literal["model", "harness"] | None


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k)/C(n, k), exactly: integer binomials, one correctly rounded division.

    Python integers do not overflow and `int / int` rounds once, so this is as stable as it gets
    (the usual product form accumulates a rounding error per factor).
    """
    if k < 1 or n < k or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def task_counts(runs: pd.DataFrame, by: GroupBy = None) -> pd.DataFrame:
    """n and c per (model, harness, task_id); the key not grouped by (with `by`) is None.

    `runs`: task_id, model, harness, reward (NaN/None = never verified). Runs without task_id are dropped.
    """
    runs = runs[runs["task_id"].notna()]
    keys = {"model": runs["model"], "harness": runs["harness"]}
    if by == "model":
        keys["harness"] = pd.Series([None] * len(runs), index=runs.index, dtype=object)
    elif by == "harness":
        keys["model"] = pd.Series([None] * len(runs), index=runs.index, dtype=object)
    elif by is not None:
        raise ValueError(f"--by must be model or harness, got {by!r}")
    frame = pd.DataFrame(
        {
            "model": keys["model"].astype(object),
            "harness": keys["harness"].astype(object),
            "task_id": runs["task_id"].astype(object),
            "ok": pd.to_numeric(runs["reward"], errors="coerce").fillna(-np.inf).to_numpy() >= SOLVED_AT,
        }
    )
    counts = frame.groupby(["model", "harness", "task_id"], dropna=False, sort=False)["ok"].agg(
        ["size", "sum"]
    )
    counts = counts.rename(columns={"size": "n", "sum": "c"}).reset_index()
    counts["n"] = counts["n"].astype(np.int64)
    counts["c"] = counts["c"].astype(np.int64)
    return counts


def _none(value: object) -> object:
    return (
        None if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA else value
    )


def pass_at_k_groups(runs: pd.DataFrame, ks: Sequence[int], by: GroupBy = None) -> list[dict[str, object]]:
    """The `rsr passk --json` groups: model, harness, tasks, pass_at {k: mean or null}, skipped_tasks.

    skipped_tasks maps k (as a string) to the number of the group's tasks with fewer than k runs; only
    k with at least one skipped task appear. Groups are sorted by (model, harness), missing keys first.
    """
    counts = task_counts(runs, by)
    values = {
        (n, c, k): pass_at_k(n, c, k)
        for n, c in set(zip(counts["n"].tolist(), counts["c"].tolist(), strict=True))
        for k in ks
        if n >= k
    }
    groups = []
    for (model, harness), grp in counts.groupby(["model", "harness"], dropna=False, sort=False):
        n, c = grp["n"].tolist(), grp["c"].tolist()
        pass_at: dict[str, float | None] = {}
        skipped: dict[str, int] = {}
        for k in ks:
            scores = [values[(ni, ci, k)] for ni, ci in zip(n, c, strict=True) if ni >= k]
            pass_at[str(k)] = float(np.mean(scores)) if scores else None
            if len(scores) < len(n):
                skipped[str(k)] = len(n) - len(scores)
        groups.append(
            {
                "model": _none(model),
                "harness": _none(harness),
                "tasks": len(n),
                "pass_at": pass_at,
                "skipped_tasks": skipped,
            }
        )
    groups.sort(key=lambda g: tuple((g[key] is not None, str(g[key] or "")) for key in ("model", "harness")))
    return groups
