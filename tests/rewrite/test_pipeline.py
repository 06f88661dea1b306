"""The rewrite pipeline end to end: real DuckDB, real Docker sandboxes, the scripted OpenAI-protocol server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from rsr_core.jobs.runner import JobRunner
from rsr_core.rewrite.units import RewriteParams
from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql
from rsr_core.store import pipeline as pipeline_sql
from tests.rewrite.pipeline_script import rules

pytestmark = pytest.mark.docker
RSR = [sys.executable, "-m", "rsr_core.cli"]


@pytest.fixture
def db(seeded, tmp_path):
    path = tmp_path / "rsr.duckdb"
    shutil.copy(seeded[0], path)
    return path


def test_leaky_runbook_is_flagged_replanned_and_the_funnel_adds_up(db, seeded, sandboxes, scripted):
    srv, llm = scripted(rules())
    store = Store(db)
    runner = JobRunner(store, llm, sandboxes, workers=2)
    job = runner.create(RewriteParams(k=2, m=2, planner_model="p", critic_model="c", executor_model="e"))
    assert runner.run(job) == "done"
    cur = store.cursor()
    rbs = pipeline_sql.runbooks_where(cur, "job_id", job)
    assert [(r.variant, r.round, r.critic_verdict) for r in rbs] == [
        (0, 1, "reject"),
        (0, 2, "pass"),
        (1, 1, "pass"),
    ]
    flags = pipeline_sql.flags_of(cur, rbs[0].runbook_id)
    text = rbs[0].text()
    assert {f.matched_text for f in flags} >= {"test_outputs.py", "DB_URL=sqlite:///app.db"}
    assert all(text[f.span_start : f.span_end] == f.evidence for f in flags if f.span_start is not None)
    assert rbs[1].parent_runbook_id == rbs[0].runbook_id and rbs[1].lineage_id == rbs[0].lineage_id
    replan = next(r for r in srv.requests if r["model"] == "p" and "rejected" in r["messages"][-1]["content"])
    assert "test_outputs.py" in replan["messages"][-1]["content"]  # the runbook's own offending text
    assert pipeline_sql.funnel(cur) == {
        "sources": 1,
        "runbooks": 3,
        "critic_pending": 0,
        "critic_rejected": 1,
        "approved": 2,
        "pending_review": 0,
        "human_rejected": 0,
        "executions": 4,
        "verifier_tampered": 0,
        "verifier_inconsistent": 0,
        "verified": 4,
        "answer_transfer": 1,
        "answer_transfer_replay": 0,
        "kept": 3,
        "expansion_ratio": 3.0,
    }
    rewrites = [t for t in store.list_trajectories() if t["kind"] == "rewrite"]
    assert len(rewrites) == 4 and {t["source_trajectory_id"] for t in rewrites} == {seeded[1]}
    assert {t["runbook_id"] for t in rewrites} == {rbs[1].runbook_id, rbs[2].runbook_id}
    flagged = [t for t in rewrites if pipeline_sql.transfer_of(cur, t["trajectory_id"]).answer_transfer]
    assert len(flagged) == 1 and flagged[0]["runbook_id"] == rbs[2].runbook_id
    evidence = pipeline_sql.transfer_of(cur, flagged[0]["trajectory_id"]).deterministic_evidence
    assert any("8080" in e for e in evidence)
    one = store.get_trajectory(rewrites[0]["trajectory_id"])
    assert one.steps[0].private_guidance and "Private guidance" in one.steps[0].message
    assert one.kind == "rewrite" and one.harness == "terminus-2" and one.job_id == job


def test_critic_model_sees_only_the_instruction_and_the_runbook(db, sandboxes, scripted):
    srv, llm = scripted(rules())
    store = Store(db)
    runner = JobRunner(store, llm, sandboxes)
    job = runner.create(
        RewriteParams(k=1, m=1, rounds=1, planner_model="p", critic_model="c", executor_model="e")
    )
    runner.run(job)
    task = store.get_task("json-to-env", with_hidden=True)
    hidden = [
        line.strip()
        for f in task.files
        if f.role in ("test", "solution")
        for line in f.content.splitlines()
        if len(line.strip()) > 12
    ]
    critic_requests = [r for r in srv.requests if r["model"] == "c"]
    assert critic_requests
    for req in critic_requests:
        blob = json.dumps(req["messages"])
        assert not [h for h in hidden if h in blob]
        assert task.instruction.strip().splitlines()[0] in req["messages"][1]["content"]


def test_human_gate_waits_for_a_review_then_resumes(db, scripted, sandboxes):
    srv, _ = scripted(rules())
    env = {**os.environ, "RSR_LLM_BASE_URL": srv.url}
    common = ["--db", str(db), "--json"]
    res = subprocess.run(
        [
            *RSR,
            "rewrite",
            "--k",
            "1",
            "--m",
            "1",
            "--gate",
            "human",
            "--planner-model",
            "p",
            "--critic-model",
            "c",
            "--executor-model",
            "e",
            *common,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = json.loads(res.stdout)
    assert res.returncode == 0 and out["status"] == "waiting_review", res.stderr
    assert out["funnel"]["pending_review"] == 1 and out["funnel"]["executions"] == 0
    store = Store(db)
    (rb,) = [
        r
        for r in pipeline_sql.runbooks_where(store.cursor(), "job_id", out["job_id"])
        if r.critic_verdict == "pass"
    ]
    store.close()
    res = subprocess.run(
        [*RSR, "review", "approve", rb.runbook_id, "--by", "alice", "--reason", "clean", *common],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    res = subprocess.run(
        [*RSR, "jobs", "resume", out["job_id"], *common], env=env, capture_output=True, text=True, timeout=300
    )
    done = json.loads(res.stdout)
    assert done["status"] == "done" and done["funnel"]["approved"] == 1 and done["funnel"]["executions"] == 1
    assert done["funnel"]["kept"] == 1
    store = Store(db)
    assert [r.reviewer for r in pipeline_sql.reviews_of(store.cursor(), rb.runbook_id)] == ["alice"]
    store.close()
    res = subprocess.run(
        [*RSR, "review", "reject", rb.runbook_id, "--by", "bob", *common],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    store = Store(db)
    funnel = pipeline_sql.funnel(store.cursor())
    assert funnel["kept"] == 0 and funnel["human_rejected"] == 1  # the latest review decides
    assert [r.decision for r in pipeline_sql.reviews_of(store.cursor(), rb.runbook_id)] == [
        "approve",
        "reject",
    ]
    assert jobs_sql.get_job(store.cursor(), out["job_id"])["status"] == "done"
