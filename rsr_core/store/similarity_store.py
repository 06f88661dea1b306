"""Stored similarity: pair scores of passed rewrites per task and the reports built from them (migration 4).

A task's scores are current while the fingerprint of its passed rewrites (ids, content hashes, runbook ids)
matches the one stored with them; the reports are current while the fingerprint of every task's matches. All
SQL of the stored scores lives here; `rsr_core/analysis/similarity_refresh.py` decides what to score.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from rsr_core.models import SCHEMA_VERSION
from rsr_core.store.analysis_queries import PASSED_REWRITES_SQL
from rsr_core.store.sql import registered, scalar
from rsr_core.vocabulary import SIMILARITY_METRICS

if TYPE_CHECKING:  # the frames are DuckDB's; a check that all is current needs no pandas
    import pandas as pd

METRIC_COLUMNS: tuple[str, ...] = SIMILARITY_METRICS
"""A DOUBLE column of `similarity_pairs` per metric, named as the metric."""

# The fingerprint of each task with passed rewrites: what its pair scores depend on.
_FINGERPRINTS = f"""
SELECT task_id, md5(string_agg(trajectory_id || chr(31) || coalesce(content_hash, '') || chr(31)
                               || coalesce(runbook_id, chr(30)), chr(29) ORDER BY trajectory_id)) AS fingerprint,
       count(*) AS rewrites
FROM ({PASSED_REWRITES_SQL.format(task_clause="")}) GROUP BY task_id
"""


def available(cur: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database has the stored-similarity tables (an older one opened read-only has not)."""
    return bool(
        scalar(
            cur,
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'similarity_tasks' "
            "AND table_catalog = current_database()",
        )
    )


def current_fingerprints(cur: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, int]]:
    """task_id -> (fingerprint, passed rewrites) for every task with passed rewrites now."""
    return {t: (f, n) for t, f, n in cur.execute(_FINGERPRINTS).fetchall()}


def stale(cur: duckdb.DuckDBPyConnection) -> tuple[list[str], list[str]]:
    """(tasks to score: new or changed, tasks to drop: no passed rewrites any more), both sorted."""
    rows = cur.execute(
        f"""
        SELECT coalesce(c.task_id, s.task_id), c.task_id IS NULL
        FROM ({_FINGERPRINTS}) c FULL JOIN similarity_tasks s USING (task_id)
        WHERE c.fingerprint IS DISTINCT FROM s.fingerprint
        ORDER BY 1
        """
    ).fetchall()
    return [t for t, gone in rows if not gone], [t for t, gone in rows if gone]


def is_current(cur: duckdb.DuckDBPyConnection) -> bool:
    """Do every task's stored scores and the reports match the data?"""
    to_score, to_drop = stale(cur)
    return not to_score and not to_drop and set(reports(cur, overall_fingerprint(cur))) == set(METRIC_COLUMNS)


def overall_fingerprint(cur: duckdb.DuckDBPyConnection) -> str:
    """One fingerprint of every task's passed rewrites (what the reports depend on)."""
    return scalar(
        cur,
        f"SELECT md5(coalesce(string_agg(task_id || chr(31) || fingerprint, chr(29) ORDER BY task_id), '')) "
        f"FROM ({_FINGERPRINTS})",
    )


def status(cur: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """How much of the stored scores is current: tasks (with passed rewrites), stale tasks, stored pairs."""
    to_score, to_drop = stale(cur)
    return {
        "tasks": scalar(cur, f"SELECT count(*) FROM ({_FINGERPRINTS})"),
        "stale": len(to_score) + len(to_drop),
        "pairs": scalar(cur, "SELECT count(*) FROM similarity_pairs"),
    }


def stored_version(cur: duckdb.DuckDBPyConnection) -> str:
    """One fingerprint of what the reads of the stored scores give (`values`, `pairs`, `task_pair_counts`):
    every scored task's fingerprint and pair count, and its category (they are grouped by it). A refresh
    changes it; a review, a job's progress or new data not yet scored do not."""
    return scalar(
        cur,
        "SELECT md5(coalesce(string_agg(s.task_id || chr(31) || s.fingerprint || chr(31) || s.pairs || chr(31) "
        "|| coalesce(k.category, chr(30)), chr(29) ORDER BY s.task_id), '')) "
        "FROM similarity_tasks s LEFT JOIN tasks k USING (task_id)",
    )


def _ids(task_ids: list[str]) -> pa.Table:
    return pa.table({"task_id": pa.array(task_ids, pa.string())})


def rewrites_of(cur: duckdb.DuckDBPyConnection, task_ids: list[str]) -> tuple[pd.DataFrame, pa.Table]:
    """Passed rewrites of these tasks (trajectory_id, task_id, runbook_id, source_trajectory_id, category) and
    their stored commands (trajectory_id, seq, command; Arrow)."""
    sql = PASSED_REWRITES_SQL.format(task_clause="AND t.task_id IN (SELECT task_id FROM _sim_tasks)")
    with registered(cur, "_sim_tasks", _ids(task_ids)):
        rewrites = cur.execute(sql + " ORDER BY t.task_id, t.trajectory_id").fetch_df()
        commands = cur.sql(
            f"SELECT c.trajectory_id, c.seq, c.command FROM commands c JOIN ({sql}) p USING (trajectory_id)"
        ).to_arrow_table()
    return rewrites, commands


def replace_tasks(
    cur: duckdb.DuckDBPyConnection,
    fingerprints: dict[str, tuple[str, int]],
    pairs: pd.DataFrame,
    dropped: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Replace the stored pairs of these tasks (`similarity.score_pairs` rows, every metric) and record the
    fingerprints they were computed from; forget the `dropped` tasks."""
    tasks = [*fingerprints, *dropped]
    with registered(cur, "_sim_tasks", _ids(tasks)):
        cur.execute("DELETE FROM similarity_pairs WHERE task_id IN (SELECT task_id FROM _sim_tasks)")
        cur.execute("DELETE FROM similarity_tasks WHERE task_id IN (SELECT task_id FROM _sim_tasks)")
    rows = pa.table(
        {
            "task_id": pa.array(pairs["task_id"].astype(object), pa.string()),
            "trajectory_a": pa.array(pairs["trajectory_a"].astype(object), pa.string()),
            "trajectory_b": pa.array(pairs["trajectory_b"].astype(object), pa.string()),
            "same_runbook": pa.array(pairs["relation"].to_numpy() == "same", pa.bool_()),
            **{m: pa.array(pairs[m].to_numpy(dtype="float64"), pa.float64()) for m in METRIC_COLUMNS},
        }
    )
    counts = pairs["task_id"].value_counts().to_dict() if len(pairs) else {}
    meta = pa.table(
        {
            "task_id": pa.array(list(fingerprints), pa.string()),
            "fingerprint": pa.array([f for f, _ in fingerprints.values()], pa.string()),
            "rewrites": pa.array([n for _, n in fingerprints.values()], pa.int32()),
            "pairs": pa.array([int(counts.get(t, 0)) for t in fingerprints], pa.int32()),
        }
    )
    with registered(cur, "_sim_rows", rows):
        metrics = ", ".join(f'"{m}"' for m in METRIC_COLUMNS)
        cur.execute(
            f"INSERT INTO similarity_pairs (task_id, trajectory_a, trajectory_b, same_runbook, {metrics}) "
            "SELECT * FROM _sim_rows"
        )
    with registered(cur, "_sim_meta", meta):
        cur.execute(
            "INSERT INTO similarity_tasks (task_id, fingerprint, rewrites, pairs, schema_version) "
            "SELECT task_id, fingerprint, rewrites, pairs, ? FROM _sim_meta",
            [SCHEMA_VERSION],
        )


def pairs(
    cur: duckdb.DuckDBPyConnection, metrics: tuple[str, ...] = METRIC_COLUMNS, task_id: str | None = None
) -> pd.DataFrame:
    """Stored pairs as `similarity.score_pairs` returns them: PAIR_COLUMNS (category and runbooks read now)
    and the metric columns, ordered by task and pair."""
    for m in metrics:
        if m not in METRIC_COLUMNS:
            raise ValueError(f"unknown metric {m!r}")
    cols = ", ".join(f'p."{m}"' for m in metrics)
    where, params = ("WHERE p.task_id = ?", [task_id]) if task_id else ("", [])
    return cur.execute(
        f"""
        SELECT p.task_id, k.category, p.trajectory_a, p.trajectory_b, a.runbook_id AS runbook_a,
               b.runbook_id AS runbook_b, CASE WHEN p.same_runbook THEN 'same' ELSE 'cross' END AS relation, {cols}
        FROM similarity_pairs p LEFT JOIN tasks k USING (task_id)
        LEFT JOIN trajectories a ON a.trajectory_id = p.trajectory_a
        LEFT JOIN trajectories b ON b.trajectory_id = p.trajectory_b
        {where} ORDER BY p.task_id, p.trajectory_a, p.trajectory_b
        """,
        params,
    ).fetch_df()


def values(
    cur: duckdb.DuckDBPyConnection, metric: str, group: str | None = None, task_ids: list[str] | None = None
) -> pd.DataFrame:
    """One metric's stored scores with their relation and, by `group` ("task_id" or "category"), their group:
    columns group, relation, value (group is None when `group` is None)."""
    if metric not in METRIC_COLUMNS:
        raise ValueError(f"unknown metric {metric!r}")
    key = {"task_id": "p.task_id", "category": "coalesce(k.category, '(none)')", None: "NULL"}[group]
    join = "LEFT JOIN tasks k USING (task_id)" if group == "category" else ""
    sql = (
        f"SELECT {key} AS grp, CASE WHEN p.same_runbook THEN 'same' ELSE 'cross' END AS relation, "
        f'p."{metric}" AS value FROM similarity_pairs p {join}'
    )
    if task_ids is None:
        return cur.execute(sql).fetch_df()
    with registered(cur, "_sim_tasks", _ids(task_ids)):
        return cur.execute(sql + " WHERE p.task_id IN (SELECT task_id FROM _sim_tasks)").fetch_df()


def task_pair_counts(cur: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """task_id, pairs: tasks with stored pairs, most pairs first."""
    return cur.execute(
        "SELECT task_id, pairs FROM similarity_tasks WHERE pairs > 0 ORDER BY pairs DESC, task_id"
    ).fetch_df()


def store_reports(
    cur: duckdb.DuckDBPyConnection, fingerprint: str, reports: dict[str, dict[str, Any]]
) -> None:
    """Replace the stored reports (metric -> `similarity.summarise` payload) computed for `fingerprint`."""
    cur.execute("DELETE FROM similarity_reports")
    cur.executemany(
        "INSERT INTO similarity_reports (metric, fingerprint, report, schema_version) VALUES (?, ?, ?, ?)",
        [[m, fingerprint, json.dumps(r), SCHEMA_VERSION] for m, r in reports.items()],
    )


def reports(cur: duckdb.DuckDBPyConnection, fingerprint: str) -> dict[str, dict[str, Any]]:
    """The stored reports computed for `fingerprint` (none when they were computed for other data)."""
    rows = cur.execute(
        "SELECT metric, report FROM similarity_reports WHERE fingerprint = ?", [fingerprint]
    ).fetchall()
    return {m: json.loads(r) for m, r in rows}
