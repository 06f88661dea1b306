"""The C build of `atif_read.parse_steps` (rsr_core/formats/_steps.c) against the Python function: the same
models, field for field, or the same error, on every ATIF file the tests hold and on generated step lists of
harbor's shape, written right and written wrong."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsr_core.formats.atif_read import native_steps, parse_steps
from rsr_core.formats.reading import FormatError

ROOT = Path(__file__).resolve().parents[2]


def test_the_native_steps_are_built_wherever_a_c_compiler_is():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the package installs without the C build")
    assert native_steps() is not None, (
        "a C compiler is here but rsr_core.formats._steps is not built: make venv"
    )


def _native() -> Any:
    fast = native_steps()
    if fast is None:
        pytest.skip("rsr_core.formats._steps is not built (no C compiler)")
    return fast


def _outcome(raw: Any, native: bool) -> Any:
    try:
        steps = parse_steps(copy.deepcopy(raw), native=native)
    except (FormatError, ValueError, TypeError, KeyError, OverflowError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return [(repr(s.__dict__), s.__pydantic_fields_set__, repr(s.model_dump())) for s in steps]


def _same(raw: Any) -> None:
    assert _outcome(raw, True) == _outcome(raw, False)


def _files() -> list[Path]:
    found = [
        p
        for p in (ROOT / "tests" / "data").rglob("*.json")
        if p.name == "trajectory.json" or "atif" in p.parts
    ]
    found += list((ROOT / "data" / "demo").rglob("trajectory.json"))
    return sorted(found)


def test_every_atif_file_of_the_tests_reads_the_same():
    fast = _native()
    taken = 0
    files = _files()
    assert len(files) > 20
    for path in files:
        try:
            doc = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        raw = doc.get("steps") if isinstance(doc, dict) else None
        _same(raw)
        taken += fast.parse_steps(copy.deepcopy(raw)) is not None
    assert taken >= 5  # harbor's own runs, at least, were read in C


# ---- generated steps of harbor's shape ----

_WORDS = [
    "ls",
    " ",
    "\n",
    "\t",
    "é",
    "\u3000",
    "Analysis:",
    "\nPlan:",
    "Plan:",
    "{",
    "x",
    "\x00",
    '"',
    "\ud800",
]
text = st.lists(st.sampled_from(_WORDS), max_size=6).map("".join)
MESSAGES = [
    "Analysis: a\nPlan: b",
    "Are you sure you want to mark the task as complete?",
    "[RSRT] not passed",
    "phase: explore",
    ' {"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 1}], "task_complete": true}',
    "{not json",
]
ODD = st.sampled_from([None, 1, 1.5, True, [], {}, "s", [{"type": "text", "text": "t"}]])


@st.composite
def call(draw: Any, step_id: int, n: int) -> dict[str, Any]:
    name = draw(
        st.sampled_from(["bash_command", "bash_command", "mark_task_complete", "submit", "Bash", "other"])
    )
    args: dict[str, Any] = {}
    if name != "mark_task_complete":
        args["keystrokes"] = draw(text)
        duration_key = draw(st.sampled_from(["duration", "duration", "timeout_sec", None]))
        if duration_key:
            args[duration_key] = draw(
                st.one_of(
                    st.floats(allow_nan=True), st.integers(-5, 10**400), st.sampled_from([True, None, "1"])
                )
            )
    out: dict[str, Any] = {
        "tool_call_id": draw(st.sampled_from([f"call_{step_id}_{n}", f"call_0_{n}", "x"])),
        "function_name": name,
        "arguments": args,
    }
    return out


@st.composite
def step(draw: Any, step_id: int) -> dict[str, Any]:
    source = draw(st.sampled_from(["agent", "agent", "user", "system"]))
    raw: dict[str, Any] = {"step_id": step_id, "source": source}
    message = draw(st.one_of(text, st.sampled_from(MESSAGES)))
    raw["message"] = message
    if draw(st.booleans()):
        raw["timestamp"] = "2025-01-01T00:00:00Z"
    if source == "agent":
        raw["model_name"] = "m"
        calls = [draw(call(step_id, n)) for n in range(draw(st.integers(0, 3)))]
        if draw(st.booleans()):
            raw["tool_calls"] = calls
            if calls and draw(st.booleans()):
                raw["observation"] = {
                    "results": [{"source_call_id": calls[0]["tool_call_id"], "content": draw(text)}]
                }
        if draw(st.booleans()):
            raw["metrics"] = {"prompt_tokens": draw(st.integers(0, 9)), "cost_usd": draw(st.floats(0, 1))}
            if draw(st.booleans()):
                raw["metrics"]["cached_tokens"] = 3
    if draw(st.booleans()):
        raw["observation"] = {"results": [{"content": draw(text)} for _ in range(draw(st.integers(0, 2)))]}
    return raw


def _spoil(draw: Any, raw_steps: list[dict[str, Any]]) -> None:
    """One change that makes a list of steps unusual or wrong."""
    if not raw_steps:
        return
    target = draw(st.sampled_from(raw_steps))
    change = draw(
        st.sampled_from(
            [
                "key",
                "odd",
                "extra",
                "copied",
                "step_id",
                "source",
                "args_text",
                "no_args",
                "results",
                "content",
            ]
        )
    )
    if change == "key":
        target[draw(st.sampled_from(["step_id", "source", "message", "metrics", "observation"]))] = draw(ODD)
    elif change == "odd":
        target["unknown"] = 1
    elif change == "extra":
        target["extra"] = draw(st.sampled_from([{}, {"harness_control": True}, {"task_complete": 1}, None]))
    elif change == "copied":
        target["is_copied_context"] = draw(st.booleans())
    elif change == "step_id":
        target["step_id"] += draw(st.sampled_from([1, -1]))
    elif change == "source":
        target["source"] = "tool"
    elif target.get("tool_calls") and change in ("args_text", "no_args"):
        first = target["tool_calls"][0]
        if change == "args_text":
            first["arguments"] = json.dumps(first["arguments"])
        else:
            del first["arguments"]
    elif change == "results":
        target["observation"] = draw(st.sampled_from([{}, {"results": None}, {"results": [1]}, []]))
    elif change == "content":
        target["observation"] = {"results": [{"content": draw(ODD)}, {"subagent_trajectory_ref": {"x": 1}}]}
    if "metrics" in target and isinstance(target["metrics"], dict) and draw(st.booleans()):
        target["metrics"]["completion_tokens"] = draw(ODD)


@st.composite
def step_lists(draw: Any, spoiled: bool) -> list[dict[str, Any]]:
    raw_steps = [draw(step(i + 1)) for i in range(draw(st.integers(0, 6)))]
    if spoiled:
        _spoil(draw, raw_steps)
    return raw_steps


_TAKEN: list[bool] = []


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(step_lists(spoiled=False), step_lists(spoiled=True)))
def test_generated_steps_read_the_same(raw_steps: list[dict[str, Any]]):
    fast = _native()
    _same(raw_steps)
    _TAKEN.append(fast.parse_steps(copy.deepcopy(raw_steps)) is not None)


def test_the_generated_steps_reach_the_c_build():
    """The comparison above is not vacuous: many generated lists were read in C."""
    if not _TAKEN:
        test_generated_steps_read_the_same()
    assert sum(_TAKEN) >= len(_TAKEN) // 4, f"{sum(_TAKEN)} of {len(_TAKEN)}"


def test_a_harbor_turn_reads_in_c_with_its_calls_kept_under_their_ids():
    fast = _native()
    raw = [
        {"step_id": 1, "source": "user", "message": "Do it."},
        {
            "step_id": 2,
            "source": "agent",
            "message": "Analysis:  look \nPlan: list ",
            "tool_calls": [
                {
                    "tool_call_id": "call_0_1",
                    "function_name": "bash_command",
                    "arguments": {"keystrokes": "ls\n", "duration": 0.5},
                },
                {"tool_call_id": "call_0_tc", "function_name": "mark_task_complete", "arguments": {}},
            ],
            "observation": {"results": [{"source_call_id": "call_0_1", "content": "a\nb"}]},
            "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.5, "cached_tokens": 4},
        },
        {"step_id": 3, "source": "user", "message": "Are you sure you want to mark the task as complete?"},
    ]
    steps = fast.parse_steps(copy.deepcopy(raw))
    assert steps is not None
    agent = steps[1]
    assert (agent.analysis, agent.plan, agent.task_complete, agent.observation) == (
        "look",
        "list",
        True,
        "a\nb",
    )
    assert (
        agent.extra["cached_tokens"] == 4
        and agent.extra["_atif"]["tool_calls"][0]["tool_call_id"] == "call_0_1"
    )
    assert "observation" not in agent.extra["_atif"]
    assert steps[2].harness_control is True
    _same(raw)
