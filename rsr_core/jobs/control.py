"""Asking about and stopping a job from outside its runner: what `rsr jobs cancel` and the studio's cancel
button both do."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

import duckdb

from rsr_core.store import jobs as jobs_sql
from rsr_core.system import pid_alive

CANCEL_REQUESTED = "cancel_requested"
"""What `cancel_job` reports for a job whose live runner was asked to stop (not a job status: the job stays
running until its runner sees the request)."""
FINAL = ("done", "cancelled")
"""Job statuses (of JOB_STATUSES) a cancel leaves as they are."""


def runner_alive(job: dict[str, Any]) -> bool:
    """Is the process recorded as running this job alive? (Only a runner on this host can be checked; one on
    another host counts as alive.)"""
    pid, host = job.get("owner_pid"), job.get("owner_host")
    if pid is None:
        return False
    if host and host != socket.gethostname():
        return True
    return pid_alive(int(pid))


@dataclass(frozen=True)
class CancelOutcome:
    """What cancelling a job did."""

    job_id: str
    status: str
    """CANCEL_REQUESTED (its runner stops after the units in flight), or the job's status now: cancelled, or
    the final status it already had."""
    was: str
    """The job's status before."""
    owner_pid: int | None = None
    """The runner asked to stop (with CANCEL_REQUESTED)."""
    owner_host: str | None = None


def cancel_job(cur: duckdb.DuckDBPyConnection, job_id: str) -> CancelOutcome | None:
    """Cancel a job (None: no such job). A job whose runner is alive gets a cancel request, which the runner,
    wherever it runs, sees within a second; a finished or cancelled job is left as it is; any other job
    (pending, failed, waiting for review, or running in a dead process) is cancelled at once with its pending
    units. No process is signalled."""
    job = jobs_sql.get_job(cur, job_id)
    if job is None:
        return None
    if job["status"] == "running" and runner_alive(job):
        jobs_sql.request_cancel(cur, job_id)
        return CancelOutcome(job_id, CANCEL_REQUESTED, job["status"], job["owner_pid"], job["owner_host"])
    if job["status"] in FINAL:
        return CancelOutcome(job_id, job["status"], job["status"])
    jobs_sql.cancel_pending(cur, job_id)
    jobs_sql.set_status(cur, job_id, "cancelled")
    return CancelOutcome(job_id, "cancelled", job["status"])
