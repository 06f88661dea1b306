"""The Planner against the scripted server: schema validation with retries, prompt version, K variants."""

from __future__ import annotations

import pytest

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.models import Command, Step, Trajectory
from rsr_core.rewrite.llm_json import ModelOutputError
from rsr_core.rewrite.planner import PROMPT_VERSION, plan_runbook
from tests.conftest import DEMO_TASKS

GOOD = {
    "target_end_state": "done",
    "key_milestones": ["a"],
    "useful_checks": ["b"],
    "recovery_strategies": ["c"],
    "pitfalls": ["d"],
}
SOURCE = Trajectory(
    trajectory_id="src",
    task_id="json-to-env",
    harness="statem",
    steps=[
        Step(index=1, source="user", message="instruction"),
        Step(
            index=2,
            source="agent",
            analysis="look",
            plan="cat",
            commands=[Command(keystrokes="cat /app/config.json\n")],
            observation='{"port": 8080}',
        ),
        Step(
            index=3,
            source="user",
            message="[statem] phase: plan. Allowed transitions: implement.",
            harness_control=True,
        ),
    ],
)


def test_invalid_answers_are_retried_with_the_error(scripted):
    srv, llm = scripted(
        [{"model": "p", "turns": ["not json", {"target_end_state": "x", "key_milestones": []}, GOOD]}]
    )
    task = read_harbor_task(DEMO_TASKS / "json-to-env")
    rb = plan_runbook(llm, "p", task, SOURCE, runbook_id="r1", lineage_id="l1", variant=2, variants=4)
    assert rb.key_milestones == ["a"] and rb.prompt_version == PROMPT_VERSION == "planner_v1"
    assert (rb.variant, rb.round, rb.model) == (2, 1, "p")
    assert len(srv.requests) == 3
    assert "key_milestones" in srv.requests[2]["messages"][-1]["content"]  # the validation error was fed back
    first = srv.requests[0]
    assert first["seed"] == 2 and "runbook 3 of 4" in first["messages"][1]["content"]
    assert "cat /app/config.json" in first["messages"][1]["content"]
    assert "[statem]" not in first["messages"][1]["content"]  # harness control steps are dropped


def test_gives_up_after_the_retries(scripted):
    _, llm = scripted([{"model": "p", "response": "never json"}])
    task = read_harbor_task(DEMO_TASKS / "json-to-env")
    with pytest.raises(ModelOutputError, match="RunbookDraft"):
        plan_runbook(llm, "p", task, SOURCE, runbook_id="r1", lineage_id="l1", variant=0, variants=1)
