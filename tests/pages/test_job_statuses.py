"""Job statuses are named once (rsr_core/vocabulary.py): the store takes no other, the studio's jobs view shows
each and offers to resume exactly the resumable ones, and `rsr jobs cancel` / `rsr jobs list` handle each."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rsr_core.jobs.control import FINAL
from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql
from rsr_core.vocabulary import JOB_RESUMABLE, JOB_STATUSES, UNIT_STATUSES
from tests.pages.conftest import grid_frame, page

RSR = str(Path(sys.executable).parent / "rsr")
DEAD_PID = 2**22 + 12345  # above Linux's largest PID: no such process


def _one_job_per_status(db: Path, owner_pid: int) -> None:
    """A job in each status; the running one owned by `owner_pid` on this host."""
    with Store(db).transaction() as cur:
        for status in JOB_STATUSES:
            jobs_sql.create_job(cur, f"st-{status}", {}, scripted=False)
            owner = (
                {"owner_pid": owner_pid, "owner_host": socket.gethostname()} if status == "running" else {}
            )
            jobs_sql.set_status(cur, f"st-{status}", status, **owner)


def _rsr(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RSR, *args, "--db", str(db)], capture_output=True, text=True, timeout=120)


def test_the_store_takes_only_the_named_statuses(store):
    with store.transaction() as cur:
        jobs_sql.create_job(cur, "j", {}, scripted=False)
        with pytest.raises(ValueError, match="job status 'finished': expected one of pending, running"):
            jobs_sql.set_status(cur, "j", "finished")
        with pytest.raises(ValueError, match="unit statuses"):
            jobs_sql.requeue(cur, "j", ("running", "lost"))
        assert jobs_sql.get_job(cur, "j")["status"] == "pending"
        assert jobs_sql.requeue(cur, "j", UNIT_STATUSES) == {}


def test_the_jobs_view_shows_every_status_and_offers_the_resumable_ones(demo_db):
    _one_job_per_status(demo_db, DEAD_PID)
    at = page("rewrite")
    assert not at.exception
    shown = grid_frame(at, "jobs_table")
    status = dict(zip(shown["job_id"], shown["status"], strict=True))
    assert {status[f"st-{s}"] for s in JOB_STATUSES} == set(JOB_STATUSES)
    offered = at.selectbox(key="resume_job").options
    assert {o for o in offered if o.startswith("st-")} == {f"st-{s}" for s in JOB_RESUMABLE}


def test_rsr_jobs_list_and_cancel_handle_every_status(demo_db):
    _one_job_per_status(demo_db, os.getpid())  # the running job's runner is this (live) process
    listed = json.loads(_rsr(demo_db, "jobs", "list", "--json").stdout)
    assert {j["job_id"]: j["status"] for j in listed if j["job_id"].startswith("st-")} == {
        f"st-{s}": s for s in JOB_STATUSES
    }
    for status in JOB_STATUSES:
        done = _rsr(demo_db, "jobs", "cancel", f"st-{status}", "--json")
        assert done.returncode == 0, done.stderr
        said = json.loads(done.stdout)
        if status == "running":
            assert said == {"job_id": "st-running", "status": "cancel_requested", "owner_pid": os.getpid()}
        else:
            assert said == {"job_id": f"st-{status}", "status": status if status in FINAL else "cancelled"}
    with Store(demo_db).reading() as cur:
        after = {s: jobs_sql.get_job(cur, f"st-{s}") for s in JOB_STATUSES}
    assert after["running"]["status"] == "running" and after["running"]["cancel_requested"]
    assert {s: j["status"] for s, j in after.items() if s != "running"} == {
        s: s if s in FINAL else "cancelled" for s in JOB_STATUSES if s != "running"
    }
    again = _rsr(
        demo_db, "jobs", "cancel", "st-failed"
    )  # cancelled by the loop: a final status, left as it is
    assert again.returncode == 0 and again.stdout == "job st-failed is cancelled\n"
    gone = _rsr(demo_db, "jobs", "cancel", "no-such-job")
    assert gone.returncode == 1 and gone.stderr == "rsr: no job 'no-such-job'\n"


def test_a_running_job_whose_runner_died_is_cancelled_at_once(demo_db):
    _one_job_per_status(demo_db, DEAD_PID)
    done = _rsr(demo_db, "jobs", "cancel", "st-running")
    assert done.returncode == 0 and done.stdout == "job st-running cancelled\n"
    with Store(demo_db).reading() as cur:
        assert jobs_sql.get_job(cur, "st-running")["status"] == "cancelled"
