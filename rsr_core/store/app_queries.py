"""Queries behind the app's pages: the filtered trajectory list and the runbook review queue."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import duckdb
import pandas as pd

from rsr_core.store import queries
from rsr_core.store.pipeline import REWRITE_STATUS_SQL
from rsr_core.store.sql import scalar

ReviewStatus = Literal["approved", "rejected", "unreviewed"]
_LATEST = "(SELECT runbook_id, arg_max(decision, seq) AS decision FROM reviews GROUP BY runbook_id)"


@dataclass
class ListFilter:
    """The trajectory list's filters: the core ones plus flags, review status and kept."""

    core: queries.TrajectoryFilter = field(default_factory=queries.TrajectoryFilter)
    has_flags: bool | None = None
    review_status: ReviewStatus | None = None
    kept: bool | None = None


def _where(f: ListFilter) -> tuple[str, list[Any]]:
    where, params = queries._where(f.core)  # noqa: SLF001 - same package, one definition of the core filter
    clauses = [where]
    if f.has_flags is not None:
        clauses.append(
            ("" if f.has_flags else "NOT ") + "(t.runbook_id IN (SELECT runbook_id FROM critic_flags) "
            "OR t.trajectory_id IN (SELECT trajectory_id FROM transfer_checks WHERE answer_transfer))"
        )
    if f.review_status is not None:
        decision = {"approved": "= 'approve'", "rejected": "= 'reject'", "unreviewed": "IS NULL"}
        clauses.append(
            f"t.runbook_id IS NOT NULL AND (SELECT decision FROM {_LATEST} l WHERE "
            f"l.runbook_id = t.runbook_id) {decision[f.review_status]}"
        )
    if f.kept is not None:
        clauses.append(
            f"t.trajectory_id IN (SELECT trajectory_id FROM ({REWRITE_STATUS_SQL}) WHERE kept = ?)"
        )
        params.append(f.kept)
    return " AND ".join(clauses), params


def list_page(cur: duckdb.DuckDBPyConnection, f: ListFilter, limit: int, offset: int) -> pd.DataFrame:
    """One page of the list (the core list query when only core filters are set)."""
    where, params = _where(f)
    cols = ", ".join(f"t.{c}" for c in queries.LIST_COLUMNS)
    sql = (
        f"SELECT {cols} FROM trajectories t WHERE {where} "
        "ORDER BY t.task_id, t.kind, t.harness, t.trajectory_id LIMIT ? OFFSET ?"
    )
    return cur.execute(sql, [*params, limit, offset]).fetch_df()


def list_count(cur: duckdb.DuckDBPyConnection, f: ListFilter) -> int:
    """Size of the filtered list."""
    where, params = _where(f)
    return scalar(cur, f"SELECT count(*) FROM trajectories t WHERE {where}", params)


def facet_values(cur: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Values for the filter widgets."""

    def col(sql: str) -> list[str]:
        return [r[0] for r in cur.execute(sql).fetchall() if r[0] is not None]

    return {
        "task_id": col("SELECT task_id FROM tasks ORDER BY task_id"),
        "category": col("SELECT DISTINCT category FROM tasks ORDER BY 1"),
        "harness": col("SELECT DISTINCT harness FROM trajectories ORDER BY 1"),
        "kind": col("SELECT DISTINCT kind FROM trajectories ORDER BY 1"),
    }


def counts_by_kind_harness(cur: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """kind, harness, trajectories, solved (reward >= 1), pass_rate."""
    return cur.execute(
        "SELECT kind, harness, count(*) AS trajectories, count(*) FILTER (WHERE reward >= 1.0) AS solved, "
        "round(count(*) FILTER (WHERE reward >= 1.0) / count(*), 3) AS pass_rate "
        "FROM trajectories GROUP BY ALL ORDER BY kind, harness"
    ).fetch_df()


def runbook_queue(
    cur: duckdb.DuckDBPyConnection, status: str | None = None, task_id: str | None = None
) -> pd.DataFrame:
    """Runbook rounds with their status: critic_rejected, pending_review, approved, human_rejected (or
    critic_pending while the critic has not answered)."""
    sql = f"""
        SELECT * FROM (
            SELECT r.runbook_id,
                   CASE WHEN r.critic_verdict = 'reject' THEN 'critic_rejected'
                        WHEN r.critic_verdict = 'pending' THEN 'critic_pending'
                        WHEN l.decision = 'reject' THEN 'human_rejected'
                        WHEN l.decision = 'approve' THEN 'approved'
                        WHEN coalesce(j.params->>'gate' = 'human', FALSE) THEN 'pending_review'
                        ELSE 'approved' END AS status,
                   r.task_id, r.variant, r.round, r.critic_verdict,
                   (SELECT count(*) FROM critic_flags f WHERE f.runbook_id = r.runbook_id) AS flags,
                   l.decision AS review, r.source_trajectory_id, r.job_id, r.created_at
            FROM runbooks r LEFT JOIN {_LATEST} l USING (runbook_id) LEFT JOIN jobs j USING (job_id)
        ) WHERE (? IS NULL OR status = ?) AND (? IS NULL OR task_id = ?)
        ORDER BY CASE status WHEN 'pending_review' THEN 0 ELSE 1 END, task_id, variant, round
    """
    return cur.execute(sql, [status, status, task_id, task_id]).fetch_df()


def rewrites_with_status(cur: duckdb.DuckDBPyConnection, column: str, value: str) -> pd.DataFrame:
    """Rewrite trajectories of a runbook (column runbook_id) or of a source (source_trajectory_id), with
    verified / answer_transfer / human_rejected / kept."""
    assert column in ("runbook_id", "source_trajectory_id")
    return cur.execute(
        f"SELECT * FROM ({REWRITE_STATUS_SQL}) WHERE {column} = ? ORDER BY runbook_id, trajectory_id", [value]
    ).fetch_df()


def sources_with_rewrites(cur: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Source trajectories that have rewrites: trajectory_id, task_id, harness, rewrites."""
    return cur.execute(
        "SELECT s.trajectory_id, s.task_id, s.harness, count(r.trajectory_id) AS rewrites "
        "FROM trajectories s JOIN trajectories r ON r.source_trajectory_id = s.trajectory_id AND r.kind = 'rewrite' "
        "GROUP BY ALL ORDER BY s.task_id, s.trajectory_id"
    ).fetch_df()


def rewrite_candidates(cur: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Successful discovery trajectories that can be rewritten, with the number of rewrites they have."""
    return cur.execute(
        "SELECT t.trajectory_id, t.task_id, t.harness, t.model, t.n_steps, "
        "(SELECT count(*) FROM trajectories r WHERE r.source_trajectory_id = t.trajectory_id) AS rewrites "
        "FROM trajectories t WHERE t.kind = 'discovery' AND t.reward >= 1.0 AND t.task_id IS NOT NULL "
        "ORDER BY t.task_id, t.harness, t.trajectory_id"
    ).fetch_df()


def step_count(cur: duckdb.DuckDBPyConnection, trajectory_id: str) -> int:
    """Number of steps of a trajectory (0 when unknown)."""
    return scalar(cur, "SELECT n_steps FROM trajectories WHERE trajectory_id = ?", [trajectory_id]) or 0
