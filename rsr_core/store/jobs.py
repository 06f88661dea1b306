"""Jobs and their work units: rows with a status, so a killed job can be resumed with nothing lost or repeated."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from rsr_core.store.sql import one, registered, row_as_dict, rows_as_dicts, scalar
from rsr_core.vocabulary import JOB_STATUSES, UNIT_STATUSES

UNIT_KINDS = ("plan", "critic", "execute", "filter")


def create_job(cur: duckdb.DuckDBPyConnection, job_id: str, params: dict[str, Any], scripted: bool) -> None:
    """A new job (status pending)."""
    cur.execute(
        "INSERT INTO jobs (job_id, status, params, scripted) VALUES (?, 'pending', ?, ?)",
        [job_id, json.dumps(params), scripted],
    )


def set_status(
    cur: duckdb.DuckDBPyConnection,
    job_id: str,
    status: str,
    owner_pid: int | None = None,
    error: str | None = None,
    owner_host: str | None = None,
) -> None:
    """Update a job's status (one of JOB_STATUSES; ValueError otherwise) and who runs it; a job that is not
    running has no owner and no cancel request."""
    if status not in JOB_STATUSES:
        raise ValueError(f"job status {status!r}: expected one of {', '.join(JOB_STATUSES)}")
    cur.execute(
        "UPDATE jobs SET status = ?, owner_pid = ?, owner_host = ?, error = ?, updated_at = current_timestamp, "
        "cancel_requested = CASE WHEN ? = 'running' THEN cancel_requested ELSE FALSE END "
        "WHERE job_id = ?",
        [status, owner_pid, owner_host, error, status, job_id],
    )


def request_cancel(cur: duckdb.DuckDBPyConnection, job_id: str) -> None:
    """Ask the job's runner, wherever it runs, to stop after the units in flight (it polls this flag)."""
    cur.execute(
        "UPDATE jobs SET cancel_requested = TRUE, updated_at = current_timestamp WHERE job_id = ?", [job_id]
    )


def cancel_requested(cur: duckdb.DuckDBPyConnection, job_id: str) -> bool:
    """Has someone asked this job to stop?"""
    row = one(cur, "SELECT cancel_requested FROM jobs WHERE job_id = ?", [job_id])
    return bool(row and row[0])


def get_job(cur: duckdb.DuckDBPyConnection, job_id: str) -> dict[str, Any] | None:
    """A job row with decoded params."""
    job = row_as_dict(
        cur.execute(
            "SELECT job_id, status, params, scripted, owner_pid, error, created_at, updated_at, owner_host, "
            "cancel_requested FROM jobs WHERE job_id = ?",
            [job_id],
        )
    )
    if job is not None:
        job["params"] = json.loads(job["params"])
    return job


def list_jobs(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """All jobs, newest first, with unit counts by status, when their units ran and what they asked of models."""
    jobs = rows_as_dicts(
        cur.execute(
            """
            SELECT j.job_id, j.status, j.created_at, j.scripted, count(u.unit_id) AS units,
                   count(u.unit_id) FILTER (WHERE u.status = 'done') AS done,
                   count(u.unit_id) FILTER (WHERE u.status = 'failed') AS failed,
                   count(u.unit_id) FILTER (WHERE u.status = 'running') AS running,
                   min(u.started_at) AS started_at, max(u.finished_at) AS finished_at,
                   sum(u.prompt_tokens) AS prompt_tokens, sum(u.completion_tokens) AS completion_tokens,
                   j.owner_pid, j.owner_host
            FROM jobs j LEFT JOIN work_units u USING (job_id)
            GROUP BY ALL ORDER BY j.created_at DESC, j.job_id
            """
        )
    )
    for job in jobs:
        start, end = job["started_at"], job["finished_at"]
        job["seconds"] = (end - start).total_seconds() if start and end and end >= start else None
    return jobs


def add_units(
    cur: duckdb.DuckDBPyConnection, job_id: str, units: list[tuple[str, str, dict[str, Any]]]
) -> int:
    """Insert (unit_id, kind, payload) rows that do not exist yet; returns how many were new."""
    if not units:
        return 0
    import pyarrow as pa  # here, not at the top: reading jobs (`rsr jobs list`) needs no Arrow

    table = pa.table(
        {
            "unit_id": [u[0] for u in units],
            "kind": [u[1] for u in units],
            "payload": [json.dumps(u[2]) for u in units],
        }
    )
    with registered(cur, "_units", table):
        before = scalar(cur, "SELECT count(*) FROM work_units WHERE job_id = ?", [job_id])
        cur.execute(
            "INSERT INTO work_units (unit_id, job_id, kind, status, payload) "
            "SELECT n.unit_id, ?, n.kind, 'pending', n.payload FROM _units n "
            "WHERE n.unit_id NOT IN (SELECT unit_id FROM work_units)",
            [job_id],
        )
        after = scalar(cur, "SELECT count(*) FROM work_units WHERE job_id = ?", [job_id])
    return after - before


def pending_units(cur: duckdb.DuckDBPyConnection, job_id: str, limit: int) -> list[dict[str, Any]]:
    """Units ready to run, oldest first (plans, then critics, then executions, then filters)."""
    rows = cur.execute(
        "SELECT unit_id, kind, payload FROM work_units WHERE job_id = ? AND status = 'pending' "
        "ORDER BY CASE kind WHEN 'plan' THEN 0 WHEN 'critic' THEN 1 WHEN 'execute' THEN 2 ELSE 3 END, "
        "created_at, unit_id LIMIT ?",
        [job_id, limit],
    ).fetchall()
    return [{"unit_id": r[0], "kind": r[1], "payload": json.loads(r[2])} for r in rows]


def mark_running(cur: duckdb.DuckDBPyConnection, unit_id: str) -> None:
    """A unit has been handed to a worker."""
    cur.execute(
        "UPDATE work_units SET status = 'running', attempts = attempts + 1, started_at = current_timestamp "
        "WHERE unit_id = ?",
        [unit_id],
    )


def mark_done(
    cur: duckdb.DuckDBPyConnection,
    unit_id: str,
    result: dict[str, Any],
    usage: dict[str, Any] | None = None,
    worker: str | None = None,
) -> None:
    """A unit's outputs are stored (same transaction as the outputs), with the model usage and where it ran."""
    usage = usage or {}
    cur.execute(
        "UPDATE work_units SET status = 'done', result = ?, error = NULL, finished_at = current_timestamp, "
        "model = ?, prompt_tokens = ?, completion_tokens = ?, worker = ? WHERE unit_id = ?",
        [
            json.dumps(result),
            usage.get("model"),
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            worker,
            unit_id,
        ],
    )


def mark_failed(cur: duckdb.DuckDBPyConnection, unit_id: str, error: str) -> None:
    """A unit failed; resuming the job retries it."""
    cur.execute(
        "UPDATE work_units SET status = 'failed', error = ?, finished_at = current_timestamp "
        "WHERE unit_id = ?",
        [error[:4000], unit_id],
    )


def requeue(
    cur: duckdb.DuckDBPyConnection, job_id: str, statuses: tuple[str, ...]
) -> dict[str, dict[str, int]]:
    """Put units in these statuses back to pending (after a crash, or to retry failures); returns what was
    re-queued, {status: {kind: n}}."""
    if not set(statuses) <= set(UNIT_STATUSES):
        raise ValueError(f"unit statuses {statuses!r}: expected some of {', '.join(UNIT_STATUSES)}")
    placeholders = ", ".join("?" * len(statuses))
    found: dict[str, dict[str, int]] = {}
    for status, kind, n in cur.execute(
        f"SELECT status, kind, count(*) FROM work_units WHERE job_id = ? AND status IN ({placeholders}) "
        "GROUP BY ALL ORDER BY ALL",
        [job_id, *statuses],
    ).fetchall():
        found.setdefault(status, {})[kind] = n
    cur.execute(
        f"UPDATE work_units SET status = 'pending', started_at = NULL WHERE job_id = ? "
        f"AND status IN ({placeholders})",
        [job_id, *statuses],
    )
    return found


def cancel_pending(cur: duckdb.DuckDBPyConnection, job_id: str) -> None:
    """Cancel what has not started."""
    cur.execute(
        "UPDATE work_units SET status = 'cancelled' WHERE job_id = ? AND status = 'pending'", [job_id]
    )


def unit_counts(cur: duckdb.DuckDBPyConnection, job_id: str) -> dict[str, dict[str, int]]:
    """{kind: {status: n}}."""
    out: dict[str, dict[str, int]] = {k: {} for k in UNIT_KINDS}
    for kind, status, n in cur.execute(
        "SELECT kind, status, count(*) FROM work_units WHERE job_id = ? GROUP BY ALL", [job_id]
    ).fetchall():
        out.setdefault(kind, {})[status] = n
    return out


def units_of(
    cur: duckdb.DuckDBPyConnection, job_id: str, offset: int = 0, limit: int | None = None
) -> list[dict[str, Any]]:
    """The units of a job (all of them for `rsr jobs show`; a page of `limit` from `offset` for the job view):
    status, tries, error, where and when it ran, what it asked of the model; oldest first."""
    page = "" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}"
    res = cur.execute(
        "SELECT unit_id, kind, status, attempts, error, worker, started_at, finished_at, model, prompt_tokens, "
        f"completion_tokens FROM work_units WHERE job_id = ? ORDER BY created_at, unit_id{page}",
        [job_id],
    )
    return rows_as_dicts(res)


def approved_without_executions(cur: duckdb.DuckDBPyConnection, job_id: str) -> list[str]:
    """Runbooks of the job whose status is approved (passed the critic and, under the human gate, approved by a
    reviewer), with no execution units yet."""
    rows = cur.execute(
        """
        SELECT r.runbook_id FROM runbook_status r
        WHERE r.job_id = ? AND r.status = 'approved'
          AND NOT EXISTS (SELECT 1 FROM work_units u WHERE u.job_id = r.job_id AND u.kind = 'execute'
                          AND (u.payload->>'runbook_id') = r.runbook_id)
        ORDER BY r.runbook_id
        """,
        [job_id],
    ).fetchall()
    return [r[0] for r in rows]


def pending_review(cur: duckdb.DuckDBPyConnection, job_id: str) -> int:
    """Runbooks of the job that passed the critic and wait for a human."""
    return int(
        scalar(
            cur,
            "SELECT count(*) FROM runbook_status WHERE job_id = ? AND status = 'pending_review'",
            [job_id],
        )
    )


def unit_usage(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every finished unit's model usage with its job, role (unit kind), model and task."""
    res = cur.execute(
        """
        SELECT u.job_id, u.kind AS role, u.model, coalesce(r.task_id, s.task_id) AS task_id,
               u.prompt_tokens, u.completion_tokens, u.cost_usd
        FROM work_units u
        LEFT JOIN runbooks r ON r.runbook_id = (u.payload->>'runbook_id')
        LEFT JOIN trajectories s ON s.trajectory_id = (u.payload->>'source_trajectory_id')
        WHERE u.status = 'done'
        """
    )
    return rows_as_dicts(res)


def usage_by_job(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Finished units' model usage summed per job, model and whether the unit recorded its cost (what
    `analysis.cost.job_costs` needs; a few rows per job however many units it has)."""
    res = cur.execute(
        """
        SELECT job_id, model, coalesce(cost_usd IS NOT NULL AND NOT isnan(cost_usd), FALSE) AS recorded,
               sum(cost_usd) AS cost_usd, sum(coalesce(prompt_tokens, 0)) AS prompt_tokens,
               sum(coalesce(completion_tokens, 0)) AS completion_tokens,
               count(*) FILTER (WHERE coalesce(prompt_tokens, 0) <> 0 OR coalesce(completion_tokens, 0) <> 0)
                   AS with_tokens
        FROM work_units WHERE status = 'done' GROUP BY ALL ORDER BY ALL
        """
    )
    return rows_as_dicts(res)


def kept_rewrites(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Kept rewrites with their job, task and executor model (what cost is divided by)."""
    res = cur.execute(
        "SELECT s.job_id, s.task_id, t.model FROM rewrite_status s JOIN trajectories t USING (trajectory_id) "
        "WHERE s.kept"
    )
    return rows_as_dicts(res)


def failed_units(cur: duckdb.DuckDBPyConnection, job_id: str) -> list[dict[str, Any]]:
    """Failed units of a job grouped by error: {error, units, kinds, first: [unit ids]}, most frequent first."""
    rows = cur.execute(
        """
        SELECT coalesce(error, '(no message)') AS error, count(*) AS units, list(DISTINCT kind) AS kinds,
               list(unit_id ORDER BY unit_id)[1:5] AS first
        FROM work_units WHERE job_id = ? AND status = 'failed'
        GROUP BY ALL ORDER BY units DESC, error
        """,
        [job_id],
    ).fetchall()
    return [{"error": r[0], "units": r[1], "kinds": sorted(r[2]), "first": list(r[3])} for r in rows]


def discover_results(cur: duckdb.DuckDBPyConnection, job_id: str) -> list[dict[str, Any]]:
    """The finished runs of a discovery job: task_id, harness, run, trajectory_id."""
    return rows_as_dicts(
        cur.execute(
            "SELECT payload->>'task_id' AS task_id, payload->>'harness' AS harness, "
            "CAST(payload->>'run' AS INTEGER) AS run, result->>'trajectory_id' AS trajectory_id "
            "FROM work_units WHERE job_id = ? AND kind = 'discover' AND status = 'done' ORDER BY unit_id",
            [job_id],
        )
    )
