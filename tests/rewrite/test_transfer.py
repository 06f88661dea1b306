"""The deterministic answer-transfer check."""

from __future__ import annotations

from rsr_core.models import Command, Runbook, Step, Task, Trajectory
from rsr_core.rewrite.literals import value_literals
from rsr_core.rewrite.transfer import deterministic_transfer

TASK = Task(
    task_id="t", instruction="Write the status counts of /app/access.log to counts.csv as status,count."
)
RUNBOOK = Runbook(
    runbook_id="rb",
    lineage_id="rb",
    source_trajectory_id="s",
    task_id="t",
    target_end_state="counts.csv exists",
    key_milestones=["count"],
    useful_checks=["cat"],
    recovery_strategies=["redo"],
    pitfalls=["none"],
    prompt_version="planner_v1",
)
SOURCE = Trajectory(
    trajectory_id="s",
    task_id="t",
    steps=[
        Step(
            index=1,
            source="agent",
            commands=[Command(keystrokes="awk '{print $9}' access.log | sort | uniq -c\n")],
            observation="     19 200\n      6 404\n",
        )
    ],
)


def _rewrite(*turns: tuple[str, str]) -> Trajectory:
    steps = [Step(index=1, source="user", message=TASK.instruction)]
    for i, (keys, obs) in enumerate(turns, 2):
        steps.append(Step(index=i, source="agent", commands=[Command(keystrokes=keys)], observation=obs))
    return Trajectory(trajectory_id="r", task_id="t", kind="rewrite", steps=steps)


def test_values_seen_first_are_fine():
    r = _rewrite(
        ("awk '{print $9}' access.log | sort | uniq -c\n", "     19 200\n      6 404\n"),
        ("printf 'status,count\\n200,19\\n404,6\\n' > counts.csv\n", ""),
    )
    assert deterministic_transfer(r, RUNBOOK, SOURCE, TASK) == []


def test_values_known_only_from_the_source_run_are_transfer():
    r = _rewrite(("printf 'status,count\\n200,19\\n404,6\\n' > counts.csv\n", ""))
    evidence = deterministic_transfer(r, RUNBOOK, SOURCE, TASK)
    assert any("'19'" in e for e in evidence) and any("'404'" in e for e in evidence)


def test_code_and_option_values_are_not_data():
    assert value_literals("head -n 50 x; python3 -c \"print(1)\"; awk '{print $9}' f") == []
    assert value_literals("echo 2024 > year.txt") == ["2024"]


def test_a_model_without_a_valid_verdict_leaves_it_to_the_deterministic_check(scripted):
    from rsr_core.rewrite.transfer import check_transfer

    _, llm = scripted(
        [{"model": "judge", "response": {"verdict": "pass", "flags": []}}]
    )  # not a transfer answer
    r = _rewrite(("printf 'status,count\\n200,19\\n404,6\\n' > counts.csv\n", ""))
    verdict = check_transfer(llm, "judge", r, RUNBOOK, SOURCE, TASK)
    assert verdict.answer_transfer and verdict.llm_verdict is None
    assert "no verdict" in verdict.llm_evidence[0]
