"""The three harnesses in real sandboxes against the scripted OpenAI-protocol server."""

from __future__ import annotations

import json

import pytest

from rsr_core.harness import RSRTHarness, StateMHarness, Terminus2Harness
from tests.conftest import answer

pytestmark = pytest.mark.docker
WRITE = "printf 'a,1\\n' > /app/out.txt\n"
WRONG = "printf 'b,2\\n' > /app/out.txt\n"


def _users(request):
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_terminus2_parse_error_and_double_confirmation(sandboxes, scripted, csv_task):
    srv, llm = scripted(
        [
            {
                "model": "t2",
                "turns": [
                    "not json at all",
                    answer("write", "p", WRITE),
                    answer(done=True),
                    answer("wait", "one more look"),  # breaks the pending confirmation
                    answer(done=True),
                    answer(done=True),
                ],
            }
        ]
    )
    r = Terminus2Harness(llm, sandboxes, "t2", max_turns=10).run(csv_task)
    assert (r.reward, r.turns, r.stop_reason, r.claimed) == (1.0, 6, "completed", True)
    steps = r.trajectory.steps
    assert steps[1].extra.get("parse_error") and "could not be used" in steps[1].observation
    assert "could not be used" in _users(srv.requests[1])[-1]
    confirms = [s for s in steps if s.harness_control]
    assert len(confirms) == 2 and all("Are you sure" in s.message for s in confirms)
    assert r.trajectory.kind == "discovery" and r.trajectory.harness == "terminus-2"
    assert "a,1" in steps[2].observation  # real terminal output of the printf
    assert r.trajectory.verifier_output and "passed" in r.trajectory.verifier_output


def test_terminus2_max_turns_and_wall_clock(sandboxes, scripted, csv_task):
    _, llm = scripted(
        [
            {"model": "idle", "response": answer("look", "again", "true\n")},
            {"model": "slow", "response": answer("x", "y", "sleep 3\n", duration=2.0)},
        ]
    )
    r = Terminus2Harness(llm, sandboxes, "idle", max_turns=3).run(csv_task)
    assert (r.turns, r.stop_reason, r.reward) == (3, "max_turns", 0.0)
    r = Terminus2Harness(llm, sandboxes, "slow", max_turns=10, wall_clock_s=1.0).run(csv_task)
    assert (r.turns, r.stop_reason) == (1, "wall_clock_budget")


def test_rsrt_answers_only_not_passed(sandboxes, scripted, csv_task):
    srv, llm = scripted(
        [
            {
                "model": "rsrt",
                "turns": [
                    answer("w", "p", WRONG, done=True),
                    answer("fix", "p", WRITE, done=True),
                ],
            }
        ]
    )
    r = RSRTHarness(llm, sandboxes, "rsrt", max_turns=10).run(csv_task)
    assert (r.reward, r.turns, r.stop_reason) == (1.0, 2, "passed")
    control = [s.message for s in r.trajectory.steps if s.harness_control]
    assert control[0] == "not passed" and "Reflect" in control[1]
    feedback = _users(srv.requests[1])[-1]
    assert "not passed" in feedback
    hidden = next(f.content for f in csv_task.files if f.path == "tests/test_outputs.py")
    assert all(hidden.strip() not in json.dumps(req) for req in srv.requests)
    assert "assert" not in feedback


def test_rsrt_claim_budget(sandboxes, scripted, csv_task):
    _, llm = scripted([{"model": "rsrt-bad", "response": answer("w", "p", WRONG, done=True)}])
    r = RSRTHarness(llm, sandboxes, "rsrt-bad", max_turns=10, claim_budget=2).run(csv_task)
    assert (r.reward, r.turns, r.stop_reason) == (0.0, 2, "claim_budget")


STATEM_RULES = [
    {
        "model": "sm",
        "when": {"conversation": "Current phase: explore\\."},
        "turns": [answer("e", "p", "ls /app\n", transition="verify"), answer("e", "p", transition="plan")],
    },
    {
        "model": "sm",
        "when": {"conversation": "Current phase: plan\\."},
        "turns": [answer("p", "p", done=True), answer("p", "write the file", transition="implement")],
    },
    {
        "model": "sm",
        "when": {"conversation": "Current phase: implement\\."},
        "turns": [answer("i", "p", WRITE, transition="verify")],
    },
    {
        "model": "sm",
        "when": {"conversation": "Current phase: verify\\."},
        "turns": [answer("v", "p", "cat /app/out.txt\n", done=True)],
    },
]


def test_statem_checks_transitions_and_keeps_context_phase_local(sandboxes, scripted, csv_task, tmp_path):
    srv, llm = scripted(STATEM_RULES)
    state = tmp_path / "state.json"
    r = StateMHarness(llm, sandboxes, "sm", max_turns=12, state_path=state).run(csv_task)
    assert (r.reward, r.turns, r.stop_reason) == (1.0, 6, "completed")
    control = [s.message for s in r.trajectory.steps if s.harness_control]
    assert any("transition to 'verify' refused" in m and "plan" in m for m in control)
    assert any("accepted only in the verify phase" in m for m in control)
    assert sum(m.startswith("[statem] phase: implement.") for m in control) == 1
    # after each accepted transition the model sees one fresh user message for the new phase
    phase_starts = [req for req in srv.requests if len(req["messages"]) == 1]
    assert [
        next(
            p
            for p in ("explore", "plan", "implement", "verify")
            if f"Current phase: {p}." in req["messages"][0]["content"]
        )
        for req in phase_starts
    ] == ["explore", "plan", "implement", "verify"]
    record = json.loads(state.read_text())
    assert record["phase"] == "done" and [n["phase"] for n in record["notes"]] == [
        "explore",
        "plan",
        "implement",
        "verify",
    ]


def test_statem_resumes_from_its_state_record(sandboxes, scripted, csv_task, tmp_path):
    state = tmp_path / "state.json"
    state.write_text(
        json.dumps(
            {
                "task_id": csv_task.task_id,
                "phase": "verify",
                "turn": 4,
                "notes": [{"phase": "implement", "analysis": "wrote it", "plan": ""}],
                "keystrokes": [[WRITE, 0.2]],
            }
        )
    )
    srv, llm = scripted(STATEM_RULES)
    r = StateMHarness(llm, sandboxes, "sm", max_turns=5, state_path=state).run(csv_task)
    assert (r.reward, r.turns) == (1.0, 1)  # the replayed command rebuilt the environment
    assert "Notes from the implement phase: wrote it" in srv.requests[0]["messages"][0]["content"]
