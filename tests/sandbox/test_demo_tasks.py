"""Every demo task: the hidden tests fail on the untouched environment and pass with the reference solution."""

from __future__ import annotations

import pytest

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.sandbox.verifier import run_verifier
from tests.conftest import DEMO_TASKS
from tests.docker_support import run_solution

TASKS = sorted(p.name for p in DEMO_TASKS.iterdir() if (p / "task.toml").is_file())


def test_there_are_at_least_eight_demo_tasks():
    assert len(TASKS) >= 8


@pytest.mark.docker
@pytest.mark.parametrize("name", TASKS)
def test_solution_passes_and_untouched_environment_fails(name, sandboxes):
    task = read_harbor_task(DEMO_TASKS / name)
    with sandboxes.open(task) as sb:
        untouched = run_verifier(sb, task)
    assert untouched.reward == 0.0, untouched.output
    with sandboxes.open(task) as sb:
        run_solution(sb, task)
        solved = run_verifier(sb, task)
    assert solved.reward == 1.0, solved.output
