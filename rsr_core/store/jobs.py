"""Jobs and their work units: rows with a status, so a killed job can be resumed with nothing lost or repeated."""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pyarrow as pa

from rsr_core.store.sql import one, registered

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
    """Update a job's status (and who runs it); a job that is not running has no owner and no cancel request."""
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
    row = one(
        cur,
        "SELECT job_id, status, params, scripted, owner_pid, error, created_at, updated_at, owner_host, "
        "cancel_requested FROM jobs WHERE job_id = ?",
        [job_id],
    )
    if row is None:
        return None
    keys = (
        "job_id", "status", "params", "scripted", "owner_pid", "error", "created_at", "updated_at", "owner_host",
        "cancel_requested",
    )  # fmt: skip
    job = dict(zip(keys, row, strict=True))
    job["params"] = json.loads(job["params"])
    return job


def list_jobs(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """All jobs, newest first, with unit counts by status."""
    rows = cur.execute(
        """
        SELECT j.job_id, j.status, j.created_at, j.scripted, count(u.unit_id),
               count(u.unit_id) FILTER (WHERE u.status = 'done'),
               count(u.unit_id) FILTER (WHERE u.status = 'failed')
        FROM jobs j LEFT JOIN work_units u USING (job_id)
        GROUP BY ALL ORDER BY j.created_at DESC, j.job_id
        """
    ).fetchall()
    keys = ("job_id", "status", "created_at", "scripted", "units", "done", "failed")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def add_units(
    cur: duckdb.DuckDBPyConnection, job_id: str, units: list[tuple[str, str, dict[str, Any]]]
) -> int:
    """Insert (unit_id, kind, payload) rows that do not exist yet; returns how many were new."""
    if not units:
        return 0
    table = pa.table(
        {
            "unit_id": [u[0] for u in units],
            "kind": [u[1] for u in units],
            "payload": [json.dumps(u[2]) for u in units],
        }
    )
    with registered(cur, "_units", table):
        before = one(cur, "SELECT count(*) FROM work_units WHERE job_id = ?", [job_id])[0]
        cur.execute(
            "INSERT INTO work_units (unit_id, job_id, kind, status, payload) "
            "SELECT n.unit_id, ?, n.kind, 'pending', n.payload FROM _units n "
            "WHERE n.unit_id NOT IN (SELECT unit_id FROM work_units)",
            [job_id],
        )
        after = one(cur, "SELECT count(*) FROM work_units WHERE job_id = ?", [job_id])[0]
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


def mark_done(cur: duckdb.DuckDBPyConnection, unit_id: str, result: dict[str, Any]) -> None:
    """A unit's outputs are stored (same transaction as the outputs)."""
    cur.execute(
        "UPDATE work_units SET status = 'done', result = ?, error = NULL, finished_at = current_timestamp "
        "WHERE unit_id = ?",
        [json.dumps(result), unit_id],
    )


def mark_failed(cur: duckdb.DuckDBPyConnection, unit_id: str, error: str) -> None:
    """A unit failed; resuming the job retries it."""
    cur.execute(
        "UPDATE work_units SET status = 'failed', error = ?, finished_at = current_timestamp "
        "WHERE unit_id = ?",
        [error[:4000], unit_id],
    )


def requeue(cur: duckdb.DuckDBPyConnection, job_id: str, statuses: tuple[str, ...]) -> int:
    """Put units in these statuses back to pending (after a crash, or to retry failures)."""
    placeholders = ", ".join("?" * len(statuses))
    n = one(
        cur,
        f"SELECT count(*) FROM work_units WHERE job_id = ? AND status IN ({placeholders})",
        [job_id, *statuses],
    )[0]
    cur.execute(
        f"UPDATE work_units SET status = 'pending', started_at = NULL WHERE job_id = ? "
        f"AND status IN ({placeholders})",
        [job_id, *statuses],
    )
    return n


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


def units_of(cur: duckdb.DuckDBPyConnection, job_id: str) -> list[dict[str, Any]]:
    """Every unit of a job (for `rsr jobs show`)."""
    rows = cur.execute(
        "SELECT unit_id, kind, status, attempts, error FROM work_units WHERE job_id = ? "
        "ORDER BY created_at, unit_id",
        [job_id],
    ).fetchall()
    return [dict(zip(("unit_id", "kind", "status", "attempts", "error"), r, strict=True)) for r in rows]


def approved_without_executions(cur: duckdb.DuckDBPyConnection, job_id: str) -> list[str]:
    """Runbooks of the job that passed the critic and a human approved, with no execution units yet."""
    rows = cur.execute(
        """
        SELECT r.runbook_id FROM runbook_status r
        WHERE r.job_id = ? AND r.status = 'approved'
          AND NOT EXISTS (SELECT 1 FROM work_units u WHERE u.job_id = r.job_id AND u.kind = 'execute'
                          AND u.payload->>'runbook_id' = r.runbook_id)
        ORDER BY r.runbook_id
        """,
        [job_id],
    ).fetchall()
    return [r[0] for r in rows]


def pending_review(cur: duckdb.DuckDBPyConnection, job_id: str) -> int:
    """Runbooks of the job that passed the critic and wait for a human."""
    return one(
        cur,
        """
        SELECT count(*) FROM runbook_status WHERE job_id = ? AND status = 'pending_review'
        """,
        [job_id],
    )[0]
