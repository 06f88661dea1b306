"""`kill -9` of a running job, then `rsr jobs resume`: nothing lost, nothing done twice, no orphan containers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from rsr_core.llm.scripted_server import ScriptedServer
from rsr_core.sandbox.docker_sandbox import LABEL
from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql
from rsr_core.store import pipeline as pipeline_sql
from tests.rewrite.pipeline_script import rules

pytestmark = pytest.mark.docker
RSR = [sys.executable, "-m", "rsr_core.cli"]


def test_kill_minus_nine_then_resume(seeded, tmp_path, docker_engine):
    db = tmp_path / "rsr.duckdb"
    shutil.copy(seeded[0], db)
    srv = ScriptedServer({"rules": rules()}, latency_ms=150).start()
    env = {**os.environ, "RSR_LLM_BASE_URL": srv.url}
    args = [
        "--k",
        "2",
        "--m",
        "3",
        "--workers",
        "2",
        "--planner-model",
        "p",
        "--critic-model",
        "c",
        "--executor-model",
        "e",
        "--db",
        str(db),
    ]
    try:
        proc = subprocess.Popen(
            [*RSR, "rewrite", *args], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
        )
        job_id = proc.stderr.readline().split()[1]
        deadline = time.monotonic() + 240
        for line in proc.stderr:
            if "execute 1/" in line or "execute 2/" in line or time.monotonic() > deadline:
                break
        labels = {"label": [f"{LABEL}=1", f"rsr.job={job_id}"]}
        running = []
        while not running and time.monotonic() < deadline:  # kill while an execution is in flight
            running = docker_engine.containers.list(filters=labels)
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert running, "the job was killed while executions were in flight"

        store = Store(db)
        before = jobs_sql.unit_counts(store.cursor(), job_id)
        store.close()
        assert before["execute"].get("running", 0) >= 1

        res = subprocess.run(
            [*RSR, "jobs", "resume", job_id, "--json", "--db", str(db)],
            env=env,
            capture_output=True,
            text=True,
            timeout=400,
        )
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["status"] == "done"
    finally:
        srv.stop()

    store = Store(db)
    cur = store.cursor()
    units = jobs_sql.units_of(cur, job_id)
    assert all(u["status"] == "done" for u in units)
    by_kind = {k: [u for u in units if u["kind"] == k] for k in ("plan", "critic", "execute", "filter")}
    runbooks = pipeline_sql.runbooks_where(cur, "job_id", job_id)
    rewrites = [t for t in store.list_trajectories(limit=1000) if t["kind"] == "rewrite"]
    assert len(runbooks) == len(by_kind["plan"]) == len(by_kind["critic"]) == 3
    assert len(by_kind["execute"]) == 2 * 3 and len(rewrites) == 6  # each execution stored exactly once
    assert len({(t["runbook_id"]) for t in rewrites}) == 2
    assert len(by_kind["filter"]) == sum(1 for t in rewrites if (t["reward"] or 0) >= 1.0)
    assert any(u["attempts"] == 2 for u in by_kind["execute"])  # the ones in flight ran again, once
    assert pipeline_sql.funnel(cur)["executions"] == 6
    leftover = docker_engine.containers.list(all=True, filters={"label": [f"{LABEL}=1", f"rsr.job={job_id}"]})
    assert leftover == []
