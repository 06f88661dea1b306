"""Queries behind the app's pages: the filtered trajectory list and the runbook review queue."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

import duckdb
import pandas as pd

from rsr_core.store import queries
from rsr_core.store.sql import one, row_as_dict, rows_as_dicts, scalar

ReviewStatus = Literal["approved", "rejected", "unreviewed"]


def as_review_status(value: str) -> ReviewStatus:
    """A review status filter checked (ValueError naming the statuses otherwise)."""
    if value not in get_args(ReviewStatus):
        raise ValueError(f"review status {value!r}: expected one of {', '.join(get_args(ReviewStatus))}")
    return cast(ReviewStatus, value)


@dataclass(frozen=True)
class ListFilter:
    """The trajectory list's filters: the core ones plus flags, review status and kept."""

    core: queries.TrajectoryFilter = field(default_factory=queries.TrajectoryFilter)
    has_flags: bool | None = None
    review_status: ReviewStatus | None = None
    kept: bool | None = None


# Columns the list can show and sort by: name -> SQL over `t` (trajectories) and `p` (the price table).
COST_SQL = "coalesce(t.cost_usd, (coalesce(t.prompt_tokens, 0) * p.inp + coalesce(t.completion_tokens, 0) * p.out) / 1e6)"
LIST_SQL_COLUMNS = {
    "trajectory_id": "t.trajectory_id",
    "task_id": "t.task_id",
    "kind": "t.kind",
    "harness": "t.harness",
    "model": "t.model",
    "reward": "t.reward",
    "tampered": "coalesce(t.verifier_tampered, FALSE)",
    "steps": "t.n_steps",
    "commands": "t.n_commands",
    "prompt_tokens": "t.prompt_tokens",
    "completion_tokens": "t.completion_tokens",
    "cost_usd": COST_SQL,
    "duration_s": "t.duration_s",
    "started_at": "t.started_at",
    "source_trajectory_id": "t.source_trajectory_id",
    "runbook_id": "t.runbook_id",
    "scripted": "t.scripted",
}
DEFAULT_ORDER = ("task_id", "kind", "harness", "trajectory_id")


def _prices_sql(prices: dict[str, tuple[float, float]]) -> tuple[str, list[Any]]:
    models = sorted(prices)
    sql = "(SELECT unnest(?::VARCHAR[]) AS model, unnest(?::DOUBLE[]) AS inp, unnest(?::DOUBLE[]) AS out)"
    return sql, [models, [prices[m][0] for m in models], [prices[m][1] for m in models]]


def _where(f: ListFilter) -> tuple[str, list[Any]]:
    where, params = queries.where_clause(f.core)  # one definition of the core filter
    clauses = [where]
    if f.has_flags is not None:
        clauses.append(
            ("" if f.has_flags else "NOT ") + "(t.runbook_id IN (SELECT runbook_id FROM critic_flags) "
            "OR t.trajectory_id IN (SELECT trajectory_id FROM transfer_checks WHERE answer_transfer))"
        )
    if f.review_status is not None:
        decision = {"approved": "= 'approve'", "rejected": "= 'reject'", "unreviewed": "IS NULL"}
        clauses.append(
            "t.runbook_id IS NOT NULL AND (SELECT review FROM runbook_status r WHERE "
            f"r.runbook_id = t.runbook_id) {decision[f.review_status]}"
        )
    if f.kept is not None:
        clauses.append("t.trajectory_id IN (SELECT trajectory_id FROM rewrite_status WHERE kept = ?)")
        params.append(f.kept)
    return " AND ".join(clauses), params


def list_page(
    cur: duckdb.DuckDBPyConnection,
    f: ListFilter,
    limit: int,
    offset: int,
    sort: str | None = None,
    descending: bool = False,
    prices: tuple[tuple[str, tuple[float, float]], ...] = (),
) -> pd.DataFrame:
    """One page of the list with every LIST_SQL_COLUMNS column, sorted by one of them (ties by id); cost is the
    recorded one, else the tokens at the given prices, else null."""
    where, params = _where(f)
    price_sql, price_params = _prices_sql(dict(prices))
    cols = ", ".join(f"{sql} AS {name}" for name, sql in LIST_SQL_COLUMNS.items())
    if sort is not None and sort not in LIST_SQL_COLUMNS:
        raise ValueError(f"cannot sort by {sort!r}")
    order = (
        f"{LIST_SQL_COLUMNS[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, t.trajectory_id"
        if sort
        else ", ".join(f"t.{c}" for c in DEFAULT_ORDER)
    )
    sql = (
        f"SELECT {cols} FROM trajectories t LEFT JOIN {price_sql} p ON p.model = t.model WHERE {where} "
        f"ORDER BY {order} LIMIT ? OFFSET ?"
    )
    return cur.execute(sql, [*price_params, *params, limit, offset]).fetch_df()


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
    """kind, harness, trajectories, solved (`rsr_solved`: reward >= 1, not tampered), pass_rate."""
    return cur.execute(
        "SELECT kind, harness, count(*) AS trajectories, "
        "count(*) FILTER (WHERE rsr_solved(reward, verifier_tampered)) AS solved, "
        "round(count(*) FILTER (WHERE rsr_solved(reward, verifier_tampered)) / count(*), 3) AS pass_rate "
        "FROM trajectories GROUP BY ALL ORDER BY kind, harness"
    ).fetch_df()


_QUEUE_ORDER = ("task_id", "variant", "round", "runbook_id")  # after pending review first
_QUEUE_SQL = f"""
    WITH f AS (SELECT runbook_id, count(*) AS flags FROM critic_flags GROUP BY ALL)
    SELECT s.runbook_id, s.status, s.task_id, s.variant, s.round, s.critic_verdict,
           coalesce(f.flags, 0) AS flags,
           s.review, s.last_reviewer, s.reviews, s.source_trajectory_id, s.job_id, r.created_at
    FROM runbook_status s JOIN runbooks r USING (runbook_id) LEFT JOIN f USING (runbook_id)
    WHERE {{where}}
    ORDER BY CASE s.status WHEN 'pending_review' THEN 0 ELSE 1 END, {", ".join(f"s.{c}" for c in _QUEUE_ORDER)}
"""


def runbook_queue(
    cur: duckdb.DuckDBPyConnection, status: str | None = None, task_id: str | None = None
) -> pd.DataFrame:
    """Runbook rounds with their status (the `runbook_status` view): critic_pending, critic_rejected,
    pending_review, approved or human_rejected; pending review first."""
    where = "(? IS NULL OR s.status = ?) AND (? IS NULL OR s.task_id = ?)"
    return cur.execute(_QUEUE_SQL.format(where=where), [status, status, task_id, task_id]).fetch_df()


def queue_rows(cur: duckdb.DuckDBPyConnection, runbook_ids: Sequence[str]) -> pd.DataFrame:
    """The rows of `runbook_queue` for these rounds, as it reads them (those of unknown ids are absent)."""
    return cur.execute(
        _QUEUE_SQL.format(where="list_contains(?, s.runbook_id)"), [list(runbook_ids)]
    ).fetch_df()


def queue_with_rows(queue: pd.DataFrame, fresh: pd.DataFrame) -> pd.DataFrame:
    """The whole queue (`runbook_queue`) with the rows of the rounds in `fresh` (`queue_rows`, read after they
    changed) put in place of their old ones, in the order `runbook_queue` sorts its rows (a review changes a
    round's status, so where it sits among pending and decided rounds)."""
    kept = queue[~queue["runbook_id"].isin(fresh["runbook_id"])]
    out = pd.concat([kept, fresh.astype(queue.dtypes.to_dict())], ignore_index=True) if len(fresh) else kept
    pending_last = (out["status"] != "pending_review").tolist()
    keys = list(zip(pending_last, *(out[c].tolist() for c in _QUEUE_ORDER), strict=True))
    order = sorted(range(len(out)), key=keys.__getitem__)
    return out.iloc[order].reset_index(drop=True)


def review_progress(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Runbooks reviewed, in total and per reviewer (runbooks each has decided on, approvals, rejections), the
    reviewers who decided on most first."""
    reviewed = int(scalar(cur, "SELECT count(DISTINCT runbook_id) FROM reviews"))
    by = cur.execute(
        "SELECT reviewer, count(DISTINCT runbook_id) AS runbooks, "
        "count(*) FILTER (WHERE decision = 'approve') AS approvals, "
        "count(*) FILTER (WHERE decision = 'reject') AS rejections FROM reviews GROUP BY reviewer ORDER BY 2 DESC, 1"
    )
    return {"reviewed": reviewed, "by": rows_as_dicts(by)}


def rewrites_with_status(cur: duckdb.DuckDBPyConnection, column: str, value: str) -> pd.DataFrame:
    """Rewrite trajectories of a runbook (column runbook_id) or of a source (source_trajectory_id), with
    verified / answer_transfer / human_rejected / kept."""
    assert column in ("runbook_id", "source_trajectory_id")
    return cur.execute(
        f"SELECT * FROM rewrite_status WHERE {column} = ? ORDER BY runbook_id, trajectory_id", [value]
    ).fetch_df()


def rewrites_of_runbooks(cur: duckdb.DuckDBPyConnection, runbook_ids: list[str]) -> pd.DataFrame:
    """`rewrites_with_status` of several runbooks (a lineage's rounds) in one query."""
    return cur.execute(
        "SELECT * FROM rewrite_status WHERE list_contains(?, runbook_id) ORDER BY runbook_id, trajectory_id",
        [runbook_ids],
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
        "FROM trajectories t WHERE t.kind = 'discovery' AND rsr_solved(t.reward, t.verifier_tampered) "
        "AND t.task_id IS NOT NULL "
        "ORDER BY t.task_id, t.harness, t.trajectory_id"
    ).fetch_df()


def step_count(cur: duckdb.DuckDBPyConnection, trajectory_id: str) -> int:
    """Number of steps of a trajectory (0 when unknown)."""
    return scalar(cur, "SELECT n_steps FROM trajectories WHERE trajectory_id = ?", [trajectory_id]) or 0


def step_sources(cur: duckdb.DuckDBPyConnection, trajectory_id: str) -> list[str]:
    """The source (system, user, agent) of each step of a trajectory, in order."""
    rows = cur.execute(
        "SELECT source FROM steps WHERE trajectory_id = ? ORDER BY step_index", [trajectory_id]
    ).fetchall()
    return [r[0] for r in rows]


def rewrite_status_of(cur: duckdb.DuckDBPyConnection, trajectory_id: str) -> dict[str, Any] | None:
    """A rewrite trajectory's row of the `rewrite_status` view (verified, answer_transfer, human_rejected,
    kept), None for a trajectory that is not a rewrite."""
    return row_as_dict(cur.execute("SELECT * FROM rewrite_status WHERE trajectory_id = ?", [trajectory_id]))


def trajectory_totals(cur: duckdb.DuckDBPyConnection, trajectory_id: str) -> dict[str, Any]:
    """A trajectory's recorded prompt and completion tokens and cost ({} when it is unknown)."""
    row = one(
        cur,
        "SELECT prompt_tokens, completion_tokens, cost_usd FROM trajectories WHERE trajectory_id = ?",
        [trajectory_id],
    )
    return {"prompt": row[0], "completion": row[1], "cost": row[2]} if row else {}


def scripted_share(cur: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """Trajectories recorded against the scripted model, and all trajectories."""
    row = one(cur, "SELECT count(*) FILTER (WHERE scripted), count(*) FROM trajectories")
    return (int(row[0]), int(row[1])) if row else (0, 0)
