"""Same- vs cross-runbook command similarity of passed rewrite trajectories (the README's Analysis section).

Pairs are all unordered pairs of passed rewrites of one task; a pair is "same" when both carry one (known)
runbook_id, else "cross" (a rewrite whose runbook_id is unknown is never "same"). Inputs are the frames of
rsr_core/store/analysis_queries.py; commands are integer-coded once and scored task by task with the
vectorised kernels of `pair_metrics`.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rsr_core.analysis.bootstrap import bootstrap_cis
from rsr_core.analysis.pair_metrics import KERNELS, METRICS

PARALLEL_SUMMARY_PAIRS = 20_000
"""From this many pairs on, the same- and cross-runbook sides are summarised side by side (below, a thread costs
more than it saves)."""
PAIR_COLUMNS = ("task_id", "category", "trajectory_a", "trajectory_b", "runbook_a", "runbook_b", "relation")


@dataclass
class EncodedCommands:
    """Commands of an ordered list of trajectories, integer-coded.

    Trajectory i's command codes are `codes[offsets[i]:offsets[i + 1]]`, in `seq` order; `dictionary[code]`
    is the command string.
    """

    codes: np.ndarray
    offsets: np.ndarray
    dictionary: pa.Array

    def sequences(self, start: int, stop: int) -> list[np.ndarray]:
        """Command-code arrays of trajectories start..stop-1."""
        return [self.codes[self.offsets[i] : self.offsets[i + 1]] for i in range(start, stop)]

    @cached_property
    def vocabulary(self) -> list[str]:
        """Command string of every code (built on first use: only the fuzzy metric reads strings)."""
        return self.dictionary.to_pylist()

    @cached_property
    def first_word(self) -> np.ndarray:
        """Code of the first word (`command.split()[0]`) of every command code."""
        words = [c.split()[0] if c.split() else "" for c in self.vocabulary]
        return pd.factorize(pd.Series(words, dtype=object))[0].astype(np.int64)


def _arrow(commands: pa.Table | pd.DataFrame) -> pa.Table:
    if isinstance(commands, pa.Table):
        return commands.select(["trajectory_id", "seq", "command"]).combine_chunks()
    # An empty frame's columns are float64: older pyarrow will not convert those to strings.
    frame = commands[["trajectory_id", "seq", "command"]].astype(
        {"trajectory_id": object, "seq": "int64", "command": object}
    )
    schema = pa.schema([("trajectory_id", pa.string()), ("seq", pa.int64()), ("command", pa.large_string())])
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def encode_commands(trajectory_ids: pd.Series, commands: pa.Table | pd.DataFrame) -> EncodedCommands:
    """Integer-code commands (trajectory_id, seq, command; Arrow or pandas) of `trajectory_ids`, in that order.

    Commands of other trajectories are ignored; each trajectory's commands are put in `seq` order.
    """
    table = _arrow(commands)
    if table.num_rows == 0:  # (older pyarrow cannot combine the no chunks of an empty dictionary column)
        empty = np.empty(0, np.int64)
        return EncodedCommands(
            empty, np.zeros(len(trajectory_ids) + 1, np.int64), pa.array([], pa.large_string())
        )
    owners = pc.dictionary_encode(table.column("trajectory_id")).combine_chunks()
    position = pd.Index(trajectory_ids).get_indexer(owners.dictionary.to_pylist())
    owner = position[owners.indices.to_numpy(zero_copy_only=False)] if len(owners) else np.empty(0, int)
    keep = owner >= 0
    owner = owner[keep]
    seq = table.column("seq").to_numpy()[keep]
    order = np.lexsort((seq, owner))
    encoded = pc.dictionary_encode(table.column("command")).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False)[keep][order].astype(np.int64)
    lengths = np.bincount(owner, minlength=len(trajectory_ids))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return EncodedCommands(codes, offsets, encoded.dictionary)


def _objects(column: pd.Series) -> np.ndarray:
    """Values as Python objects with every missing value as None (pandas NA does not compare)."""
    values = column.astype(object).to_numpy().copy()
    values[pd.isna(values)] = None
    return values


def score_pairs(
    rewrites: pd.DataFrame,
    commands: pa.Table | pd.DataFrame,
    metrics: tuple[str, ...] | list[str] = METRICS,
    workers: int = -1,
) -> pd.DataFrame:
    """One row per unordered pair of passed rewrites of the same task, with one column per metric.

    `rewrites`: trajectory_id, task_id, runbook_id (optionally category); `commands`: trajectory_id, seq,
    command (an Arrow table or a pandas frame). Returns PAIR_COLUMNS + metrics; relation is "same" or "cross".
    `workers`: the threads the fuzzy and order-aware matrices may use (-1: a thread a core; 1 where the cores
    are taken otherwise); the scores do not depend on it.
    """
    for metric in metrics:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    rewrites = rewrites.sort_values(["task_id", "trajectory_id"], kind="stable").reset_index(drop=True)
    enc = encode_commands(rewrites["trajectory_id"], commands)
    tasks = rewrites["task_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, tasks[1:] != tasks[:-1]]) if len(tasks) else np.empty(0, int)
    stops = np.r_[starts[1:], len(tasks)] if len(tasks) else np.empty(0, int)
    left, right = [], []
    scores: dict[str, list[np.ndarray]] = {m: [] for m in metrics}
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        if stop - start < 2:
            continue
        i, j = np.triu_indices(stop - start, 1)
        left.append(i + start)
        right.append(j + start)
        seqs = enc.sequences(start, stop)
        for metric in metrics:
            scores[metric].append(KERNELS[metric](seqs, enc, workers)[i, j])
    a = np.concatenate(left) if left else np.empty(0, dtype=np.int64)
    b = np.concatenate(right) if right else np.empty(0, dtype=np.int64)
    runbook = _objects(rewrites["runbook_id"])
    category = rewrites["category"] if "category" in rewrites else pd.Series([None] * len(rewrites))
    same = pd.notna(runbook[a]) & (runbook[a] == runbook[b])
    out = pd.DataFrame(
        {
            "task_id": tasks[a],
            "category": _objects(category)[a],
            "trajectory_a": rewrites["trajectory_id"].to_numpy()[a],
            "trajectory_b": rewrites["trajectory_id"].to_numpy()[b],
            "runbook_a": runbook[a],
            "runbook_b": runbook[b],
            "relation": np.where(same, "same", "cross"),
        }
    )
    for metric in metrics:
        out[metric] = np.concatenate(scores[metric]) if scores[metric] else np.empty(0)
    return out


def _sides(samples: list[np.ndarray], seed: int) -> list[dict[str, Any]]:
    """The report of one side (same- or cross-runbook pairs) for each metric's values of those pairs."""
    n = len(samples[0])
    if n == 0:
        return [{"pairs": 0, "mean": None, "ci": None} for _ in samples]
    cis = bootstrap_cis(samples, seed=seed)
    return [
        {"pairs": n, "mean": float(v.mean()), "ci": [lo, hi]}
        for v, (lo, hi) in zip(samples, cis, strict=True)
    ]


def summarise(pairs: pd.DataFrame, metric: str, seed: int = 0) -> dict[str, Any]:
    """The `rsr similarity --json` payload for one metric of a pairs frame (see `score_pairs`).

    Overall means are over all pairs (not means of task means); ci is a 95% percentile bootstrap over pairs
    (fixed seed), null with mean when there are no pairs. by_task lists every task with at least one pair.
    """
    return summarise_all(pairs, [metric], seed)[metric]


def summarise_all(
    pairs: pd.DataFrame, metrics: tuple[str, ...] | list[str] = METRICS, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """`summarise` of each metric. The metrics of one side are bootstrapped together (their resamples are the
    same: one generator, seeded alike), and at scale the two sides run side by side on the machine's cores
    (numpy lets go of the interpreter); the figures are those of each metric summarised alone."""
    if not metrics:
        return {}
    same = pairs["relation"].to_numpy() == "same"
    groups = _task_groups(pairs["task_id"].to_numpy(dtype=object), same)
    columns = [pairs[m].to_numpy(dtype=np.float64) for m in metrics]
    both = [([v[same] for v in columns], seed), ([v[~same] for v in columns], seed + 1)]
    if len(pairs) < PARALLEL_SUMMARY_PAIRS or (os.cpu_count() or 1) < 2:
        same_side, cross_side = (_sides(*side) for side in both)
    else:
        with ThreadPoolExecutor(max_workers=2) as pool:
            same_side, cross_side = pool.map(lambda side: _sides(*side), both)
    return {
        m: {
            "metric": m,
            "same_runbook": same_side[i],
            "cross_runbook": cross_side[i],
            "by_task": _by_task(groups, columns[i]),
        }
        for i, m in enumerate(metrics)
    }


@dataclass
class _TaskGroups:
    """The pairs grouped by task (sorted; pairs without a task left out): in `order`, each task's same-runbook
    pairs, then its cross-runbook ones, between `bounds[2i]`, `bounds[2i + 1]` and `bounds[2i + 2]`. The same
    for every metric of a frame."""

    names: list[str]
    order: np.ndarray
    bounds: list[int]


def _task_groups(tasks: np.ndarray, same: np.ndarray) -> _TaskGroups:
    known = np.flatnonzero(pd.notna(tasks))
    if not len(known):
        return _TaskGroups([], known, [])
    names, codes = np.unique(tasks[known], return_inverse=True)
    keys = codes.reshape(-1) * 2 + (
        ~same[known]
    )  # per task: its same-runbook pairs, then its cross-runbook ones
    within = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[within], np.arange(2 * len(names) + 1)).tolist()
    return _TaskGroups(names.tolist(), known[within], bounds)


def _by_task(groups: _TaskGroups, values: np.ndarray) -> list[dict[str, Any]]:
    """Per task, the count and mean of its same- and cross-runbook pairs. Each side's values are summed in
    their order among the pairs, as a mean of that side alone would."""
    ordered = values[groups.order]
    bounds = groups.bounds
    out = []
    for i, task_id in enumerate(groups.names):
        s = ordered[bounds[2 * i] : bounds[2 * i + 1]]
        c = ordered[bounds[2 * i + 1] : bounds[2 * i + 2]]
        out.append(
            {
                "task_id": task_id,
                "same_pairs": len(s),
                "same_mean": float(s.mean()) if len(s) else None,
                "cross_pairs": len(c),
                "cross_mean": float(c.mean()) if len(c) else None,
            }
        )
    return out


def summary_frame(pairs: pd.DataFrame, metrics: tuple[str, ...] | list[str] = METRICS) -> pd.DataFrame:
    """Summary table data of a pairs frame: metric, relation, pairs, mean, ci_low, ci_high (the figures the
    Similarity page's table shows, which it reads from the stored reports)."""
    rows = []
    payloads = summarise_all(pairs, [m for m in metrics if m in pairs])
    for metric, payload in payloads.items():
        for relation in ("same", "cross"):
            side = payload[f"{relation}_runbook"]
            ci = side["ci"] or [None, None]
            rows.append(
                {
                    "metric": metric,
                    "relation": relation,
                    "pairs": side["pairs"],
                    "mean": side["mean"],
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                }
            )
    return pd.DataFrame(rows, columns=["metric", "relation", "pairs", "mean", "ci_low", "ci_high"])


def report_of(cur: duckdb.DuckDBPyConnection, metric: str, task_id: str | None = None) -> dict[str, Any]:
    """The `rsr similarity --json` payload: the stored report or stored pair scores when they are current
    (rsr_core/analysis/similarity_refresh.py keeps them so), else every pair scored now. Both give the same
    values to the last bit: stored pairs are read in the order `score_pairs` makes them."""
    from rsr_core.store import analysis_queries
    from rsr_core.store import similarity_store as stored

    if not stored.available(cur):
        pass  # a database of an older schema opened read-only: nothing stored yet
    elif task_id is None:
        report = stored.reports(cur, stored.overall_fingerprint(cur)).get(metric)
        if report is not None:
            return report
    elif task_id not in {t for stale in stored.stale(cur) for t in stale}:
        return summarise(stored.pairs(cur, (metric,), task_id), metric)
    rewrites = analysis_queries.passed_rewrites(cur, task_id)
    commands = analysis_queries.passed_rewrite_commands(cur, task_id)
    return summarise(score_pairs(rewrites, commands, [metric]), metric)
