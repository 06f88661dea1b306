"""The answer-transfer check: the deterministic rule, the model stage beside it, and the demo's rewrites."""

from __future__ import annotations

import pytest

from rsr_core.models import Command, Runbook, Step, Task, Trajectory
from rsr_core.rewrite.transfer import check_transfer
from rsr_core.transfer.reading import deterministic_transfer
from rsr_core.transfer.values import value_tokens

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
        ),
        Step(
            index=2,
            source="agent",
            commands=[Command(keystrokes="cat counts.csv\n")],
            observation="status,count\n200,19\n404,6\n",
        ),
    ],
)
HARDCODED = ("printf 'status,count\\n200,19\\n404,6\\n' > counts.csv\n", "")
COUNTED = ("awk '{print $9}' access.log | sort | uniq -c\n", "     19 200\n      6 404\n")


def _rewrite(*turns: tuple[str, str]) -> Trajectory:
    steps = [Step(index=1, source="user", message=TASK.instruction)]
    for i, (keys, obs) in enumerate(turns, 2):
        steps.append(Step(index=i, source="agent", commands=[Command(keystrokes=keys)], observation=obs))
    return Trajectory(trajectory_id="r", task_id="t", kind="rewrite", steps=steps)


def test_values_known_only_from_the_source_run_are_transfer():
    evidence = deterministic_transfer(_rewrite(HARDCODED), RUNBOOK, SOURCE, TASK)
    assert any("'200,19'" in e for e in evidence) and any("'404,6'" in e for e in evidence)
    assert all(e.startswith("step 2: ") and e.endswith("it is in the source run") for e in evidence)


def test_values_seen_first_are_fine():
    # The counts were on the screen (as "19 200"): writing them as 200,19 is derived, not transferred.
    r = _rewrite(COUNTED, ("cat counts.csv\n", "status,count\n200,19\n404,6\n"), HARDCODED)
    assert deterministic_transfer(r, RUNBOOK, SOURCE, TASK) == []


def value_literals(command: str, min_len: int = 4) -> list[str]:
    """Every value a command uses, in the forms the shell or Python would turn it into (not reversed or
    rotated, which are what hides a value, not a value)."""
    found = value_tokens(command, min_len).values()
    return sorted(tok for tok, how in found if "reversed" not in how and "rot13" not in how)


def test_every_token_is_a_value_not_only_quoted_strings_and_numbers():
    assert "ZR-8841-QX" in value_literals("echo ZR-8841-QX > /app/out.txt")
    assert "0xBEEF" in value_literals("echo 0xBEEF")
    assert "/srv/data/input.bin" in value_literals("cp /srv/data/input.bin .")
    assert "magenta" in value_literals("cat <<EOF > f\nmagenta\nEOF\n")


def test_code_flags_and_short_tokens_are_not_values():
    assert value_literals("head -n 50 x; python3 -c \"print(1)\"; awk '{print $9}' f; ls --color=auto") == []
    assert value_literals("echo 2024 > year.txt", min_len=4) == ["2024", "year", "year.txt"]
    assert value_literals("echo 2024 > year.txt", min_len=5) == ["year.txt"]


def test_the_model_saying_no_transfer_does_not_clear_a_deterministic_flag(scripted):
    _, llm = scripted([{"model": "judge", "response": {"answer_transfer": False, "evidence": []}}])
    verdict = check_transfer(llm, "judge", _rewrite(HARDCODED), RUNBOOK, SOURCE, TASK)
    assert verdict.llm_verdict is False and verdict.deterministic_evidence
    assert verdict.answer_transfer


def test_the_model_flagging_transfer_is_enough(scripted):
    _, llm = scripted(
        [
            {
                "model": "judge",
                "response": {"answer_transfer": True, "evidence": ["200,19 came from the runbook"]},
            }
        ]
    )
    r = _rewrite(COUNTED, ("cat counts.csv\n", "status,count\n200,19\n404,6\n"))
    verdict = check_transfer(llm, "judge", r, RUNBOOK, SOURCE, TASK)
    assert verdict.deterministic_evidence == [] and verdict.llm_verdict is True
    assert verdict.answer_transfer


def test_neither_stage_flagging_keeps_the_rewrite(scripted):
    _, llm = scripted([{"model": "judge", "response": {"answer_transfer": False, "evidence": []}}])
    verdict = check_transfer(llm, "judge", _rewrite(COUNTED), RUNBOOK, SOURCE, TASK)
    assert not verdict.answer_transfer and verdict.llm_verdict is False


def test_a_model_without_a_valid_verdict_leaves_it_to_the_deterministic_check(scripted):
    _, llm = scripted(
        [{"model": "judge", "response": {"verdict": "pass", "flags": []}}]
    )  # not a transfer answer
    verdict = check_transfer(llm, "judge", _rewrite(HARDCODED), RUNBOOK, SOURCE, TASK)
    assert verdict.answer_transfer and verdict.llm_verdict is None
    assert "no verdict" in verdict.llm_evidence[0]


def test_the_minimum_length_reaches_the_check():
    r = _rewrite(("printf 'status,count\\n200,19\\n' > counts.csv\n", ""))
    assert check_transfer(None, None, r, RUNBOOK, SOURCE, TASK).answer_transfer
    assert not check_transfer(None, None, r, RUNBOOK, SOURCE, TASK, min_literal_len=7).answer_transfer


@pytest.fixture(scope="module")
def demo():
    from rsr_core.demo import build_demo
    from rsr_core.store import Store

    store = Store(":memory:")
    build_demo(store)
    yield store
    store.close()


def test_the_demo_rewrites_keep_their_recorded_verdicts(demo):
    from rsr_core.store import pipeline

    cur = demo.cursor()
    checked = flagged = 0
    for row in demo.list_trajectories(limit=1000):
        recorded = row["kind"] == "rewrite" and pipeline.transfer_of(cur, row["trajectory_id"])
        if not recorded:
            continue
        rewrite = demo.get_trajectory(row["trajectory_id"])
        evidence = deterministic_transfer(
            rewrite,
            pipeline.get_runbook(cur, rewrite.runbook_id),
            demo.get_trajectory(rewrite.source_trajectory_id),
            demo.get_task(rewrite.task_id, with_hidden=True),
        )
        assert bool(evidence) == recorded.answer_transfer, (row["trajectory_id"], evidence)
        checked += 1
        flagged += bool(evidence)
    assert checked >= 40 and flagged == 1


def test_the_model_stage_is_told_about_disguised_values():
    from rsr_core.rewrite.transfer import transfer_messages

    system, user = transfer_messages(TASK, RUNBOOK, _rewrite(HARDCODED))
    assert "audit" in system["content"]  # scripted critics answer the transfer check on this word
    assert all(w in system["content"] for w in ("base64", "reversed", "variables", "here-doc"))
    assert "200,19" in user["content"] and TASK.instruction in user["content"]
