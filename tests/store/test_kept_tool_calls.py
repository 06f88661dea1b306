"""Kept ATIF tool calls that are a step's canonical calls under other ids (harbor's Terminus 2 numbers its calls
`call_<episode>_<n>`) are stored as their ids and rebuilt, value for value and byte for byte, when read."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rsr_core.formats.tool_calls import STORED_IDS, canonical_tool_calls, read_extra, stored_extra
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Command, Step
from rsr_core.store import Store


def _step(calls: Any, commands: list[Command], complete: bool = False) -> Step:
    return Step(
        index=4,
        source="agent",
        message="Analysis: a\nPlan: b",
        commands=commands,
        task_complete=complete,
        extra={"_atif": {"tool_calls": calls}, "cached_tokens": 7},
    )


def _harbor_calls(commands: list[Command], complete: bool) -> list[dict[str, Any]]:
    calls = canonical_tool_calls(4, "agent", commands, complete)
    for n, call in enumerate(calls):
        call["tool_call_id"] = (
            f"call_1_{n + 1}" if call["function_name"] != "mark_task_complete" else "call_1_tc"
        )
    return calls


def _read_back(step: Step) -> dict[str, Any]:
    stored = json.loads(json.dumps(stored_extra(step)))
    return read_extra(stored, step.index, step.source, step.commands, step.task_complete)


def _same_bytes(a: Any, b: Any) -> bool:
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


COMMANDS = [Command(keystrokes="ls -la\n", duration=0.5), Command(keystrokes="cat x\n", duration=5.0)]


def test_calls_under_other_ids_are_stored_as_their_ids_and_read_back_whole():
    step = _step(_harbor_calls(COMMANDS, True), COMMANDS, complete=True)
    stored = stored_extra(step)
    assert stored["_atif"]["tool_calls"] == {STORED_IDS: ["call_1_1", "call_1_2", "call_1_tc"]}
    assert stored["cached_tokens"] == 7
    assert step.extra["_atif"]["tool_calls"][0]["tool_call_id"] == "call_1_1"  # the model is left as it was
    assert _same_bytes(_read_back(step), step.extra)


def _variant(change: str) -> list[dict[str, Any]]:
    calls = _harbor_calls(COMMANDS, False)
    first = calls[0]
    if change == "integer duration":
        calls[1]["arguments"]["duration"] = 5
    elif change == "arguments in another order":
        first["arguments"] = {"duration": 0.5, "keystrokes": "ls -la\n"}
    elif change == "a key of its own":
        first["extra"] = {"note": 1}
    elif change == "keys in another order":
        calls[0] = {
            "function_name": first["function_name"],
            "tool_call_id": "x",
            "arguments": first["arguments"],
        }
    elif change == "another function":
        first["function_name"] = "shell"
    elif change == "another command":
        first["arguments"]["keystrokes"] = "ls\n"
    elif change == "a call more":
        calls.append({"tool_call_id": "c", "function_name": "mark_task_complete", "arguments": {}})
    elif change == "a number for an id":
        first["tool_call_id"] = 7
    elif change == "arguments of another tool":
        first["arguments"] = {"keystrokes": "ls -la\n", "duration": 0.5, "cwd": "/"}
    return calls


CHANGES = [
    "integer duration",
    "arguments in another order",
    "a key of its own",
    "keys in another order",
    "another function",
    "another command",
    "a call more",
    "a number for an id",
    "arguments of another tool",
]


def test_calls_that_differ_in_more_than_their_ids_are_stored_as_written():
    for change in CHANGES:
        step = _step(_variant(change), COMMANDS)
        assert stored_extra(step) is step.extra, change
        assert _same_bytes(_read_back(step), step.extra), change


def test_steps_without_kept_calls_are_stored_as_they_are():
    plain = Step(index=1, source="user", message="hi", extra={"a": 1})
    assert stored_extra(plain) is plain.extra
    for own in ("tool_calls", ["tool_calls"], {"tool_calls": "x"}):  # a file's own `_atif` in its step extra
        step = _step(None, COMMANDS)
        step.extra = {"_atif": own}
        assert stored_extra(step) is step.extra
    assert read_extra({"a": 1}, 1, "user", [], False) == {"a": 1}
    assert read_extra({"_atif": {"tool_calls": [{"x": 1}]}}, 1, "agent", [], False) == {
        "_atif": {"tool_calls": [{"x": 1}]}
    }


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_duration = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-3, 3))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_text, _duration), max_size=4),
    st.booleans(),
    st.lists(st.one_of(_text, st.integers()), max_size=5),
)
def test_whatever_the_calls_what_is_read_back_is_what_was_kept(pairs, complete, ids):
    commands = [Command(keystrokes=k, duration=float(d)) for k, d in pairs]
    calls = canonical_tool_calls(4, "agent", commands, complete)
    for call, raw in zip(calls, pairs, strict=False):
        call["arguments"]["duration"] = raw[1]  # as the file wrote it: 5 and 5.0 are not the same text
    for call, call_id in zip(calls, ids, strict=False):
        call["tool_call_id"] = call_id
    step = _step(calls, commands, complete)
    assert _same_bytes(_read_back(step), step.extra)


def test_a_harbor_run_is_stored_with_its_ids_only_and_read_back_as_parsed(tmp_path, data_dir):
    from rsr_core.ingest.harbor import read_trial

    (trial,) = (p.parent for p in (data_dir / "harbor_real" / "jobs" / "terminus-2-run").glob("*/agent"))
    parsed = read_trial(trial)
    store = Store(tmp_path / "s.duckdb")
    store.migrate()
    ingest_paths(store, [trial])
    with store.reading() as cur:
        raw = [
            json.loads(e) for (e,) in cur.execute("SELECT extra FROM steps WHERE source = 'agent'").fetchall()
        ]
    assert raw and all(isinstance(e["_atif"]["tool_calls"], dict) for e in raw)
    stored = store.get_trajectory(parsed.trajectory_id)
    assert [s.extra for s in stored.steps] == [s.extra for s in parsed.steps]
