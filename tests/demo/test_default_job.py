"""A rewrite job with the default settings (K=4, M=4, 3 critic rounds, critic gate) and the scripted demo model on
the demo database: `rsr rewrite` in its own process, the project's scripted server over HTTP, real Docker
sandboxes and verifier."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from rsr_core.demo import DEMO_SCRIPT, DEMO_SCRIPT_DIR, build_demo
from rsr_core.demo.script import load_demo_script
from rsr_core.llm.scripted_server import ScriptedServer
from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql
from rsr_core.store import pipeline as pipeline_sql

pytestmark = pytest.mark.docker

TASK, HARNESS = "log-summary", "terminus-2"  # a source the recorded demo never rewrote
K = M = 4
STATUSES = ("critic_pending", "critic_rejected", "approved", "pending_review", "human_rejected")


def test_a_default_job_on_a_demo_source_ends_done_with_every_unit_done(tmp_path, docker_engine):
    models = load_demo_script(DEMO_SCRIPT_DIR).common.models
    db = tmp_path / "demo.duckdb"
    store = Store(db)
    assert build_demo(store).errors == []
    (source,) = [
        r["trajectory_id"]
        for r in store.list_trajectories(limit=1000)
        if (r["kind"], r["task_id"], r["harness"]) == ("discovery", TASK, HARNESS) and r["reward"] == 1.0
    ]
    with store.reading() as cur:
        before = pipeline_sql.funnel(cur)
    server = ScriptedServer(DEMO_SCRIPT).start()
    env = {
        **os.environ,
        "RSR_DB": str(db),
        "RSR_LLM_BASE_URL": server.url,
        "RSR_PLANNER_MODEL": models.planner,
        "RSR_CRITIC_MODEL": models.critic,
        "RSR_EXECUTOR_MODEL": models.executor,
    }
    started = time.monotonic()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "rsr_core.cli", "rewrite", "--source", source, "--workers", "2", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    finally:
        server.stop()
    print(f"default job: {time.monotonic() - started:.0f} s")
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    job_id = report["job_id"]
    assert report["status"] == "done" and report["failures"] == [], report

    with store.reading() as cur:
        assert jobs_sql.failed_units(cur, job_id) == []
        units = jobs_sql.units_of(cur, job_id)
        runbooks = pipeline_sql.runbooks_where(cur, "job_id", job_id)
        after = pipeline_sql.funnel(cur)
    assert {u["status"] for u in units} == {"done"}
    # Every lineage is approved; the one whose first draft leaks is rejected once and replanned with the critique.
    lineages = {rb.lineage_id for rb in runbooks}
    approved = [rb for rb in runbooks if rb.critic_verdict == "pass"]
    rejected = [rb for rb in runbooks if rb.critic_verdict == "reject"]
    assert len(lineages) == K and {rb.lineage_id for rb in approved} == lineages and len(approved) == K
    assert [(rb.variant, rb.round) for rb in rejected] == [(0, 1)]
    replan = next(rb for rb in runbooks if rb.parent_runbook_id == rejected[0].runbook_id)
    assert replan.round == 2 and replan.critic_verdict == "pass"
    # M executions of every approved runbook: K x M for the source.
    assert sum(u["kind"] == "execute" for u in units) == K * M
    rewrites = [
        r
        for r in store.list_trajectories(limit=1000)
        if r["kind"] == "rewrite" and r["source_trajectory_id"] == source
    ]
    assert len(rewrites) == K * M and all(r["scripted"] for r in rewrites)
    assert sorted(r["runbook_id"] for r in rewrites) == sorted(
        rb.runbook_id for rb in approved for _ in range(M)
    )

    delta = {k: after[k] - before[k] for k in after if k != "expansion_ratio"}
    assert delta["sources"] == 1 and delta["runbooks"] == len(runbooks) == K + 1
    assert delta["critic_rejected"] == 1 and delta["approved"] == K
    assert sum(after[s] for s in STATUSES) == after["runbooks"]
    assert delta["executions"] == K * M and delta["verified"] == K * M  # every route solves log-summary
    assert delta["answer_transfer"] >= 1  # route C, run 2 writes counts it never computed
    assert delta["kept"] == delta["verified"] - delta["answer_transfer"]
    assert sum(u["kind"] == "filter" for u in units) == delta["verified"]
