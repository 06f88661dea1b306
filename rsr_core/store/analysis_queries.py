"""Frames the analysis reads: passed rewrites with their stored commands, runs for pass@k, solved sets.

The analysis modules are pure functions of these frames; every query of theirs lives here. Commands come from
the `commands` table (normalised at ingest), so nothing re-parses trajectory JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from rsr_core.store import pipeline, queries
from rsr_core.store.sql import registered
from rsr_core.vocabulary import SIMILARITY_METRICS

if TYPE_CHECKING:  # the frames are DuckDB's (`.df()`): the queries need no pandas of their own
    import pandas as pd

# Rewrites that passed the verifier, of a known task; the pair population of the similarity analysis.
PASSED_REWRITES_SQL = """
SELECT t.trajectory_id, t.task_id, t.runbook_id, t.source_trajectory_id, k.category, t.content_hash
FROM trajectories t LEFT JOIN tasks k USING (task_id)
WHERE t.kind = 'rewrite' AND t.task_id IS NOT NULL AND rsr_solved(t.reward, t.verifier_tampered) {task_clause}
"""


def _task_clause(task_id: str | None) -> tuple[str, list[Any]]:
    return ("AND t.task_id = ?", [task_id]) if task_id else ("", [])


def passed_rewrites(cur: duckdb.DuckDBPyConnection, task_id: str | None = None) -> pd.DataFrame:
    """Passed rewrite trajectories: trajectory_id, task_id, runbook_id, source_trajectory_id, category.

    Ordered by task_id, trajectory_id (the order pairs are enumerated in).
    """
    clause, params = _task_clause(task_id)
    sql = PASSED_REWRITES_SQL.format(task_clause=clause) + " ORDER BY t.task_id, t.trajectory_id"
    return cur.execute(sql, params).fetch_df().drop(columns="content_hash")


def passed_rewrite_commands(cur: duckdb.DuckDBPyConnection, task_id: str | None = None) -> pa.Table:
    """The stored commands of the passed rewrites as an Arrow table: trajectory_id, seq, command.

    Unordered (the consumer orders by trajectory and seq on integer codes) and left in Arrow: turning
    ~10^6 command strings into Python objects would cost more than scoring every pair.
    """
    clause, params = _task_clause(task_id)
    sql = (
        "SELECT c.trajectory_id, c.seq, c.command FROM commands c "
        f"JOIN ({PASSED_REWRITES_SQL.format(task_clause=clause)}) p USING (trajectory_id)"
    )
    return cur.sql(sql, params=params).to_arrow_table()


def runs_for_pass_at_k(cur: duckdb.DuckDBPyConnection, kind: str | None = None) -> pd.DataFrame:
    """Every run of a known task (optionally of one kind): trajectory_id, task_id, model, harness, reward.

    reward is NaN when the run was never verified and 0 when it tampered with the verifier (pass@k counts both
    as failed runs).
    """
    where, params = "task_id IS NOT NULL", []
    if kind:
        where += " AND kind = ?"
        params.append(kind)
    return cur.execute(
        "SELECT trajectory_id, task_id, model, harness, "
        "CASE WHEN coalesce(verifier_tampered, FALSE) THEN 0.0 ELSE reward END AS reward "
        f"FROM trajectories WHERE {where} "
        "ORDER BY task_id, trajectory_id",
        params,
    ).fetch_df()


def discovery_outcomes(cur: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per (harness, task) of discovery runs: harness, task_id, category, runs, solved (some run `rsr_solved`).

    The same rule as `rsr stats coverage` (rsr_core/store/queries.py coverage).
    """
    return cur.execute(
        """
        SELECT d.harness, d.task_id, k.category, d.runs, d.solved FROM (
            SELECT harness, task_id, count(*) AS runs, max(rsr_solved(reward, verifier_tampered)) AS solved
            FROM trajectories WHERE kind = 'discovery' AND task_id IS NOT NULL
            GROUP BY harness, task_id
        ) d LEFT JOIN tasks k USING (task_id)
        ORDER BY d.harness, d.task_id
        """
    ).fetch_df()


def coverage(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """`rsr stats coverage` figures (delegates to the one implementation)."""
    return queries.coverage(cur)


def funnel(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """`rsr stats funnel` figures, expansion ratio included (delegates to the one implementation)."""
    return pipeline.funnel(cur)


_MEDIAN_PAIRS = """
WITH p AS ({source}),
m AS (SELECT grp, relation, quantile_cont(value, 0.5) AS median FROM p GROUP BY ALL)
SELECT p.grp AS "group", p.relation,
       arg_min(p.trajectory_a, (abs(p.value - m.median), p.trajectory_a, p.trajectory_b)) AS trajectory_a,
       arg_min(p.trajectory_b, (abs(p.value - m.median), p.trajectory_a, p.trajectory_b)) AS trajectory_b,
       arg_min(p.value, (abs(p.value - m.median), p.trajectory_a, p.trajectory_b)) AS value
FROM p JOIN m USING (grp, relation) GROUP BY ALL ORDER BY ALL
"""
_RELATION = "CASE WHEN p.same_runbook THEN 'same' ELSE 'cross' END AS relation"


def _metric(metric: str) -> str:
    if metric not in SIMILARITY_METRICS:
        raise ValueError(f"unknown metric {metric!r}")
    return f'p."{metric}"'


def median_pairs(
    cur: duckdb.DuckDBPyConnection, metric: str, task_ids: list[str] | None = None, by: str = "task_id"
) -> pd.DataFrame:
    """Per group — a task (of `task_ids`) or, with `by="category"`, a task category — and relation (same /
    cross runbook), the stored pair whose `metric` score is closest to the median of that box: group,
    relation, trajectory_a, trajectory_b, value. The Similarity page names it on hover and opens it on a
    click."""
    value = _metric(metric)
    if by == "category":
        source = (
            f"SELECT coalesce(k.category, '(none)') AS grp, {_RELATION}, p.trajectory_a, p.trajectory_b, "
            f"{value} AS value FROM similarity_pairs p LEFT JOIN tasks k USING (task_id)"
        )
        return cur.execute(_MEDIAN_PAIRS.format(source=source)).fetch_df()
    ids = pa.table({"task_id": pa.array(task_ids or [], pa.string())})
    with registered(cur, "_median_tasks", ids):
        source = (
            f"SELECT p.task_id AS grp, {_RELATION}, p.trajectory_a, p.trajectory_b, {value} AS value "
            "FROM similarity_pairs p SEMI JOIN _median_tasks USING (task_id)"
        )
        return cur.execute(_MEDIAN_PAIRS.format(source=source)).fetch_df()


def median_pairs_of_metrics(cur: duckdb.DuckDBPyConnection, metrics: list[str]) -> pd.DataFrame:
    """Per metric (the group) and relation, over every stored pair, the pair closest to that box's median."""
    source = " UNION ALL ".join(
        f"SELECT '{m}' AS grp, {_RELATION}, p.trajectory_a, p.trajectory_b, {_metric(m)} AS value "
        "FROM similarity_pairs p"
        for m in metrics
    )
    return cur.execute(_MEDIAN_PAIRS.format(source=source)).fetch_df()
