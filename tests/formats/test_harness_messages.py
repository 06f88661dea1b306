"""Harness messages after an agent turn (Terminus 2's "are you sure?", RSRT's verifier feedback, StateM's phase
notes) are written in ATIF inside that turn's observation, as harbor's Terminus 2 writes its confirmation, and
read back as the steps the harness recorded: the same stored steps and training rows as the files that wrote
them as user steps of their own, which still read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rsr_core.formats.atif_read import HARNESS_STEPS, parse_atif
from rsr_core.formats.atif_write import step_document, trajectory_document
from rsr_core.formats.reading import FormatError
from rsr_core.formats.training import HANDOFF, training_rows
from rsr_core.models import Command, Step, Trajectory

CONFIRM = json.loads(
    (Path(__file__).parents[2] / "rsr_core" / "prompts" / "terminus2_messages_v1.json").read_text()
)["confirm"]
T0 = "2026-12-03T10:00:{:02d}.000Z"


def _agent(i: int, observation: str | None, done: bool = False, keys: str = "", **extra) -> Step:
    return Step(
        index=i,
        source="agent",
        message=f"Analysis: a{i}\nPlan: p{i}",
        analysis=f"a{i}",
        plan=f"p{i}",
        commands=[Command(keystrokes=keys)] if keys else [],
        observation=observation,
        task_complete=done,
        model_name="m",
        prompt_tokens=10 * i,
        completion_tokens=i,
        timestamp=T0.format(i),
        extra={"answer": json.dumps({"analysis": f"a{i}", "plan": f"p{i}"}), **extra},
    )


def _control(i: int, message: str, **extra) -> Step:
    return Step(
        index=i, source="user", message=message, harness_control=True, timestamp=T0.format(i), extra=extra
    )


def _run(harness: str = "terminus-2") -> Trajectory:
    """A run as our harnesses record it: the prompt, a turn, a claim answered by the confirmation, RSRT's
    feedback and reflection after a second claim, StateM's notes after the last."""
    steps = [
        Step(
            index=1,
            source="user",
            message="Do the task.\n\nCurrent terminal screen:\n$ ",
            timestamp=T0.format(1),
        ),
        _agent(2, "New terminal output:\n$ ls\nout.txt", keys="ls\n"),
        _agent(3, "New terminal output:\n$ ", done=True),
        _control(4, CONFIRM),
        _agent(5, "New terminal output:\n$ ", done=True, keys="cat out.txt\n"),
        _control(6, "not passed"),
        _control(
            7, "Reflect on what may still be wrong with your solution, then continue working on the task."
        ),
        _agent(8, "New terminal output:\n$ ", done=True),
        _control(9, "[statem] phase: done. Allowed transitions: none.", phase="done"),
    ]
    return Trajectory(
        trajectory_id=f"{harness}-t-1",
        task_id="t",
        harness=harness,
        agent_name=harness,
        agent_version="rsr-studio",
        model="m",
        reward=1.0,
        instruction="Do the task.",
        content_hash="h1",
        steps=steps,
    )


def _old_shape(traj: Trajectory) -> dict:
    """The document as earlier versions wrote it: every stored step an ATIF step, each harness message a user
    step of its own after the observation it followed."""
    doc = trajectory_document(traj)
    doc["steps"] = [step_document(s, i) for i, s in enumerate(traj.steps, 1)]
    return doc


def test_harness_messages_are_inside_the_observation_and_read_back_as_recorded():
    traj = _run()
    doc = trajectory_document(traj)
    sources = [s["source"] for s in doc["steps"]]
    assert sources == ["user", "agent", "agent", "agent", "agent"]  # no user step after an agent turn
    claim = doc["steps"][2]["observation"]["results"]
    assert claim == [{"source_call_id": "call_3_done", "content": "New terminal output:\n$ \n\n" + CONFIRM}]
    feedback = doc["steps"][3]["observation"]["results"][0]["content"]
    assert feedback.endswith("\n\nnot passed\n\nReflect on what may still be wrong with your solution, then "
                             "continue working on the task.")  # fmt: skip
    assert doc["steps"][4]["extra"][HARNESS_STEPS] == [
        {"message": "[statem] phase: done. Allowed transitions: none.", "timestamp": T0.format(9),
         "extra": {"phase": "done"}}
    ]  # fmt: skip
    # read back from the observation and the entries alone: no stored values carried beside them
    assert not any("rsr_step" in s.get("extra", {}) for s in doc["steps"])
    back, _ = parse_atif(doc)
    assert back.steps == traj.steps
    assert training_rows(back) == training_rows(traj)
    rows, _ = training_rows(back)
    confirm_turns = [m for m in rows[0] if m["role"] == "user" and CONFIRM in m["content"]]
    assert confirm_turns == [{"role": "user", "content": "New terminal output:\n$ \n\n" + CONFIRM}]


def test_files_with_harness_messages_as_user_steps_still_read_the_same():
    traj = _run("rsrt")
    new = trajectory_document(traj)
    old = _old_shape(traj)
    assert [s["source"] for s in old["steps"]].count("user") == 5
    from_old, _ = parse_atif(old)
    from_new, _ = parse_atif(new)
    assert from_old.steps == from_new.steps == traj.steps
    assert training_rows(from_old) == training_rows(from_new)


def test_a_view_of_the_steps_keeps_their_indices():
    """The training view of an export passes a subset of the steps (their stored indices have gaps)."""
    traj = _run()
    view = [s for s in traj.steps if s.index not in (2, 6, 7)]
    doc = trajectory_document(traj, view)
    back, _ = parse_atif(doc)
    assert [s.index for s in back.steps] == [s.index for s in view] == [1, 3, 4, 5, 8, 9]
    assert back.steps == view


def test_what_cannot_be_folded_stays_a_step_of_its_own():
    """A harness message that does not follow an agent turn's observation (the run's first message, after a
    turn without one, after a hand-off's summary), or that carries more than a message and its extra, is
    written as a step of its own."""
    handoff = {HANDOFF: {"request": [{"role": "user", "content": "summarise"}], "dropped_messages": 1}}
    steps = [
        Step(index=1, source="user", message="Do the task."),
        _control(2, "[statem] phase: explore."),
        _agent(3, None),
        _control(4, "after a turn without observation"),
        _agent(5, None, **handoff),
        _control(6, "after the hand-off"),
        _agent(7, "out"),
        Step(index=8, source="user", message="private", harness_control=True, private_guidance=True),
        _agent(9, "out"),
        Step(index=10, source="user", message="done?", harness_control=True, task_complete=True),
        _agent(11, "out"),
        Step(index=12, source="user", message="odd time", harness_control=True, timestamp="yesterday"),
        _agent(13, "out"),
        Step(index=14, source="user", message="not a harness message"),
    ]
    traj = Trajectory(trajectory_id="x", task_id="t", harness="statem", content_hash="h", steps=steps)
    doc = trajectory_document(traj)
    assert len(doc["steps"]) == len(steps)
    assert not any(HARNESS_STEPS in (s.get("extra") or {}) for s in doc["steps"])
    back, _ = parse_atif(doc)
    # (a hand-off's subagent reference is kept with its step, as for any trajectory)
    assert [
        s.model_copy(update={"extra": {k: v for k, v in s.extra.items() if k != "_atif"}}) for s in back.steps
    ] == steps


@pytest.mark.parametrize(
    ("entries", "field", "expected"),
    [
        ("not passed", "steps[2].extra.rsr_harness_steps", "a list of {message, timestamp, extra} objects"),
        ([7], "steps[2].extra.rsr_harness_steps[0]", "an object {message, timestamp, extra}"),
        ([{"timestamp": "x"}], "steps[2].extra.rsr_harness_steps[0].message", "a string"),
        ([{"message": "m", "extra": []}], "steps[2].extra.rsr_harness_steps[0].extra", "an object"),
        ([{"message": "m", "index": True}], "steps[2].extra.rsr_harness_steps[0].index", "an integer"),
        ([{"message": "m", "timestamp": 5}], "steps[2].extra.rsr_harness_steps[0].timestamp", "a string"),
    ],
)
def test_bad_harness_messages_are_refused_naming_the_field(entries, field, expected):
    doc = trajectory_document(_run())
    doc["steps"][2]["extra"][HARNESS_STEPS] = entries
    with pytest.raises(FormatError) as caught:
        parse_atif(doc)
    message = str(caught.value)
    assert message.startswith(f"{field}: expected {expected}") and "\n" not in message


def test_too_many_harness_messages_are_refused_before_they_are_built(monkeypatch):
    import rsr_core.formats.atif_read as atif_read

    doc = trajectory_document(_run())
    monkeypatch.setattr(atif_read, "MAX_STEPS", 6)
    with pytest.raises(FormatError, match=r"^steps\[3\]\.extra\.rsr_harness_steps: .*limit of 6 steps"):
        parse_atif(doc)


def test_rsr_ingest_reports_a_bad_entry_in_one_line(tmp_path):
    doc = trajectory_document(_run())
    doc["steps"][2]["extra"][HARNESS_STEPS] = [{"message": None}]
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc))
    rsr = Path(sys.executable).with_name("rsr")
    done = subprocess.run(
        [str(rsr), "ingest", str(path), "--db", str(tmp_path / "x.duckdb"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    errors = json.loads(done.stdout)["errors"]
    assert len(errors) == 1 and "\n" not in errors[0]["error"]
    assert "steps[2].extra.rsr_harness_steps[0].message: expected a string" in errors[0]["error"]
