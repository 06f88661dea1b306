"""An Executor run that breaks its sandbox ends as a stored rewrite trajectory, so its job unit ends normally."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.models import Runbook
from rsr_core.rewrite.executor import execute_runbook
from tests.conftest import answer

pytestmark = pytest.mark.docker
TIGHT = Path(__file__).parents[1] / "sandbox" / "data" / "tasks" / "tight-sandbox"


def test_executor_fork_bomb_returns_a_resource_limit_rewrite(scripted, sandboxes, docker_engine):
    task = read_harbor_task(TIGHT)
    rb = Runbook(
        runbook_id="rb-1",
        lineage_id="rb-1",
        source_trajectory_id="src-1",
        task_id=task.task_id,
        target_end_state="answer.txt holds ok",
        key_milestones=["write the file"],
        useful_checks=["cat it"],
        recovery_strategies=["rewrite it"],
        pitfalls=["none"],
        prompt_version="test",
    )
    bomb = answer("a", "p", "bomb() { bomb | bomb & }; bomb\n", duration=3)
    _, llm = scripted([{"model": "executor", "turns": [bomb, answer(done=True), answer(done=True)]}])
    result = execute_runbook(llm, sandboxes, "executor", task, rb, 0, job_id="job-limits")
    traj = result.trajectory
    assert result.stop_reason == "resource_limit" and traj.kind == "rewrite" and traj.runbook_id == "rb-1"
    assert traj.exception.startswith("resource_limit: pids limit reached") and traj.reward is None
    assert docker_engine.containers.list(all=True, filters={"label": "rsr.job=job-limits"}) == []
