"""A newcomer's offline rewrite from the Rewrite page: scripted demo model, real Docker, real store."""

from __future__ import annotations

import time

import pytest

from rsr_core.store import pipeline
from tests.pages.conftest import open_services, page

pytestmark = pytest.mark.docker


def test_rewrite_a_demo_task_with_the_scripted_model(demo_db, docker_engine, monkeypatch):
    monkeypatch.delenv("RSR_LLM_BASE_URL", raising=False)
    at = page("rewrite")
    assert any("No model endpoint configured" in i.value for i in at.info)
    at.button(key="use_scripted").click().run()
    assert at.text_input(key="model_executor").value == "scripted-demo-executor"
    assert any("scripted demo model" in c.value for c in at.caption)
    at.multiselect(key="rw_tasks").select("json-to-env").run()
    at.number_input(key="k").set_value(1).run()
    at.number_input(key="m").set_value(1).run()
    at.number_input(key="rounds").set_value(1).run()
    before = pipeline.funnel(open_services().store.cursor())
    at.button(key="start_job").click().run()
    assert not at.exception and any("started" in s.value for s in at.success)
    ctx = open_services()
    (job,) = list(ctx.jobs.jobs.values())
    deadline = time.monotonic() + 300
    while job.alive and time.monotonic() < deadline:
        at.run()  # the page stays usable while the job runs
        assert not at.exception
        time.sleep(2)
    assert job.status == "done", job.error
    after = pipeline.funnel(ctx.store.cursor())
    assert after["executions"] == before["executions"] + 3 and after["sources"] == before["sources"] + 2
    rewrites = ctx.store.list_trajectories(limit=1000)
    new = [
        r
        for r in rewrites
        if r["kind"] == "rewrite" and ctx.store.get_trajectory(r["trajectory_id"]).job_id == job.job_id
    ]
    assert len(new) == 3 and all(r["scripted"] for r in new)
