"""Training rows of runs against real models: a row per conversation of a run that was handed off, answers as
the model returned them, thinking only on request (`--reasoning keep`)."""

from __future__ import annotations

import json
import subprocess
import sys

from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store
from tests.export.chat_rules import plain

SAID = '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 1}], "task_complete": false}'
DONE = '{"analysis": "ok", "plan": "", "commands": [], "task_complete": true}'


def _agent(index: int, said: str, observation: str | None, **fields) -> Step:
    return Step(index=index, source="agent", message="Analysis: a\nPlan: p", analysis="a", plan="p",
                observation=observation, extra={"answer": said}, **fields)  # fmt: skip


def _handed_off() -> Trajectory:
    steps = [
        Step(index=1, source="user", message="Task: list files."),
        _agent(2, SAID, "New terminal output:\nx", commands=[Command(keystrokes="ls\n")], reasoning="hmm {"),
        Step(index=3, source="agent", message="summary", harness_control=True, extra={"handoff": {"request": []}}),
        Step(index=4, source="user", message="Task: list files.\n\nSummary: ls ran.", extra={"conversation_start": True}),
        _agent(5, DONE, "New terminal output:\n", task_complete=True),
        Step(index=6, source="user", message="Are you sure you want to mark the task as complete? Your solution will be graded and you cannot change it afterwards. If so, answer again with \"task_complete\": true.", harness_control=True),
        _agent(7, DONE, None, task_complete=True, reasoning="sure"),
    ]  # fmt: skip
    return Trajectory(trajectory_id="handed", task_id="t", harness="terminus-2", content_hash="h", reward=1.0,
                      steps=steps)  # fmt: skip


def _export(db, out, *extra: str) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "export", "--format", "sft-jsonl", "--out", str(out),
         "--db", str(db), "--json", *extra],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_handed_off_run_gives_a_row_per_conversation_with_answers_as_said(tmp_path):
    db = tmp_path / "x.duckdb"
    store = Store(db)
    store.write_trajectories([_handed_off()])
    store.close()
    rows = _export(db, tmp_path / "a.jsonl")
    assert [r["trajectory_id"] for r in rows] == ["handed", "handed"]
    assert plain(rows[0]["messages"]) == [
        {"role": "user", "content": "Task: list files."},
        {"role": "assistant", "content": SAID},
    ]
    confirm = rows[1]["messages"][2]["content"]
    assert rows[1]["messages"][0]["content"].endswith("Summary: ls ran.")
    assert (
        confirm == "New terminal output:\n\n\n" + _handed_off().steps[5].message
    )  # as the harness joins them
    assert plain(rows[1]["messages"])[-1] == {"role": "assistant", "content": DONE}
    shown = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "show", "handed", "--db", str(db)],
        capture_output=True,
        text=True,
    ).stdout
    assert "thinking (5 characters): hmm {" in shown and "thinking (4 characters): sure" in shown
    kept = _export(db, tmp_path / "b.jsonl", "--reasoning", "keep")
    assert kept[0]["messages"][-1]["content"] == f"<think>hmm {{</think>\n\n{SAID}"
    assert kept[1]["messages"][-1]["content"] == f"<think>sure</think>\n\n{DONE}"


def test_thinking_inline_in_a_recorded_message_is_not_the_answer():
    from rsr_core.formats.training import assistant_content

    said = Step(index=2, source="agent", message=f"<think>a {{b}}</think>\n{SAID}", analysis="a", plan="p",
                reasoning="beside")  # fmt: skip
    assert assistant_content(said) == SAID
    assert assistant_content(said, reasoning=True) == f"<think>beside\n\na {{b}}</think>\n\n{SAID}"
