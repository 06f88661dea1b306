"""A rewrite job against an endpoint that behaves like vLLM serving a reasoning model with an 8K context: the
Planner and the Critic think before their JSON (inline and beside it), the Executor outgrows the context and is
handed off to a fresh conversation; the rewrite is verified, kept, and its training row is what the model saw
last (less the private runbook) and what it answered."""

from __future__ import annotations

import json
import shutil

import pytest

from rsr_core.formats.training import training_rows
from rsr_core.jobs.runner import JobRunner
from rsr_core.llm.client import LLMClient
from rsr_core.llm.scripted_server import ScriptedServer
from rsr_core.rewrite.units import RewriteParams
from rsr_core.store import Store
from rsr_core.store import pipeline as pipeline_sql
from tests.conftest import answer
from tests.rewrite.pipeline_script import ENV_GOOD, runbook

pytestmark = pytest.mark.docker
THINK = "<think>Weigh {the config} first; {braces} inside thinking.</think>\n"
LONG = "x" * 9000


def _script() -> dict:
    done = json.dumps(answer(done=True))
    return {
        "max_model_len": 8192,
        "rules": [
            {"model": "p", "response": THINK + json.dumps(runbook("app.env mirrors config.json, sorted.", "r"))},
            {"model": "c", "when": {"system": "audit"}, "response": {"answer_transfer": False, "evidence": []},
             "reasoning": "no value came from nowhere"},
            {"model": "c", "response": THINK + json.dumps({"verdict": "pass", "flags": []})},
            {"model": "e", "when": {"last_user": "Write a summary"}, "response": "Listed /app three times."},
            {"model": "e", "when": {"conversation": "Summary of the work so far"},
             "turns": [THINK + json.dumps(answer("write", "p", ENV_GOOD)), done, done]},
            {"model": "e", "when": {"system": "Private guidance"},
             "response": THINK + json.dumps(answer(LONG, "p", "ls /app\n"))},
        ],
    }  # fmt: skip


def test_a_rewrite_job_on_an_8k_reasoning_model_hands_off_and_keeps_the_run(seeded, sandboxes, tmp_path):
    db = tmp_path / "rsr.duckdb"
    shutil.copy(seeded[0], db)
    srv = ScriptedServer(_script()).start()
    try:
        store = Store(db)
        runner = JobRunner(store, LLMClient(srv.url, max_retries=0), sandboxes, workers=1)
        job = runner.create(RewriteParams(k=1, m=1, planner_model="p", critic_model="c", executor_model="e"))
        status = runner.run(job)
        failures = (
            store.cursor().execute("SELECT kind, error FROM work_units WHERE status = 'failed'").fetchall()
        )
        assert status == "done", failures
    finally:
        srv.stop()
    cur = store.cursor()
    [rb] = pipeline_sql.runbooks_where(cur, "job_id", job)
    assert rb.critic_verdict == "pass" and "sorted" in rb.target_end_state  # read past the planner's thinking
    [rewrite] = [t for t in store.list_trajectories() if t["kind"] == "rewrite"]
    trajectory = store.get_trajectory(rewrite["trajectory_id"])
    assert trajectory is not None and trajectory.reward == 1.0
    assert pipeline_sql.funnel(cur)["kept"] == 1
    assert any(s.extra.get("handoff") for s in trajectory.steps)
    rows, why = training_rows(trajectory)
    last = [r for r in srv.requests if r["model"] == "e"][-1]["messages"]
    assert why is None and len(rows) == 2
    assert last[0]["role"] == "system" and "Private guidance" in last[0]["content"]
    assert rows[-1] == [*last[1:], {"role": "assistant", "content": json.dumps(answer(done=True))}]
