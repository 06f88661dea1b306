"""The C build of a trajectory's rows (rsr_core/store/_rows.c) against their definition in Python: the same
tables, value for value, on every corpus the tests hold and on generated trajectories aimed at each rule it
writes out (whitespace, tmux keys, thinking tags, kept tool calls, answers, harness messages, usage sums)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsr_core.formats.tool_calls import canonical_tool_calls
from rsr_core.formats.training import (
    ANSWER,
    CONVERSATION_START,
    confirmation,
    stored_training,
    uses_terminus1,
)
from rsr_core.ingest.detect import detect_units
from rsr_core.ingest.runner import parse_unit
from rsr_core.models import Command, Step, Trajectory
from rsr_core.store.arrow_rows import (
    COMMAND_SCHEMA,
    STEP_SCHEMA,
    TABLE_SCHEMAS,
    column_kinds,
    columns_table,
    located_tables,
    native_rows,
)
from rsr_core.store.columns import STEP_FIELDS

ROOT = Path(__file__).resolve().parents[2]
CORPORA = [ROOT / "tests" / "data", ROOT / "data" / "demo"]


def test_the_native_rows_are_built_wherever_a_c_compiler_is():
    """`make test` installs a compiler before it builds the venv: the comparisons below must not be vacuous."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the package installs without the C build")
    assert native_rows() is not None, "a C compiler is here but rsr_core.store._rows is not built: make venv"


def _native() -> Any:
    fast = native_rows()
    if fast is None:
        pytest.skip("rsr_core.store._rows is not built (no C compiler)")
    return fast


def _sinks() -> tuple[Any, ...]:
    """The C build's step, action, command and search-term rows, empty."""
    fast = _native()
    names = ("steps", "actions", "commands", "search_terms")
    return tuple(fast.Columns(column_kinds(TABLE_SCHEMAS[name])) for name in names)


def _rows(columns: Any, schema: Any) -> dict[str, list[Any]]:
    """The rows gathered in `columns`, as lists of values by column."""
    return columns_table(columns, schema).to_pydict()


def _outcome(trajectories: list[Trajectory], native: bool) -> Any:
    try:
        return located_tables(trajectories, native=native)
    except Exception as exc:  # noqa: BLE001 - the two must fail alike too
        return f"{type(exc).__name__}: {exc}"


def _same(trajectories: list[Trajectory]) -> None:
    fast, slow = _outcome(trajectories, True), _outcome(trajectories, False)
    if isinstance(slow, str) or isinstance(fast, str):
        assert fast == slow
        return
    (fast_tables, fast_counts), (slow_tables, slow_counts) = fast, slow
    assert fast_counts == slow_counts
    for name, table in slow_tables.items():
        assert fast_tables[name].schema == table.schema, name
        for column in table.column_names:
            assert _cells(fast_tables[name][column]) == _cells(table[column]), (name, column)


def _cells(column: Any) -> list[Any]:
    """A column's values, NaN as a value equal to itself."""
    return [("NaN",) if isinstance(v, float) and math.isnan(v) else v for v in column.to_pylist()]


def _corpus_trajectories() -> list[Trajectory]:
    units = [u for root in CORPORA for u in detect_units([root])]
    parsed = [parse_unit(u).trajectory for u in units]
    return [t for t in parsed if t is not None]


def test_every_trajectory_of_the_test_corpora_gets_the_same_rows():
    fast = _native()
    trajectories = _corpus_trajectories()
    assert len(trajectories) > 50
    _same(trajectories)
    taken = sum(
        fast.trajectory_rows(t.trajectory_id, t.steps, *_sinks(), False) is not None for t in trajectories
    )
    assert taken == len(trajectories)  # the rows of every one were built in C


# ---- generated trajectories ----

_WHITE = [" ", "  ", "\t", "\u3000", "\x1c", "\u00a0", "\u2028", "\r", "\x0b"]
_PIECES = [
    "ls",
    "-la",
    "echo hi",
    "C-c",
    "Enter",
    "q",
    "BSpace",
    "é",
    "日本",
    "\U0001f600",
    "\ud800",
    "\x00",
    '"',
    "\\",
    "\x08",
    "\x7f",
    "<think>",
    "</think>",
    "<",
    "{",
    "`",
    "Analysis:",
    "Plan:",
    "İ",
    "K",
]
texts = st.lists(st.sampled_from(_PIECES + _WHITE + ["\n"]), max_size=8).map("".join)
plain = st.lists(
    st.sampled_from(
        ["ls", "-la", "cd /app", "é", " ", "\n", "Plan: x", "日本", "\x08", "\x01", '"', "\\", "\t"]
    ),
    max_size=6,
).map("".join)
durations = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.sampled_from([0.5, 1.0, 1e16])
)
commands = st.lists(
    st.builds(
        lambda k, d, f: Command.model_construct(keystrokes=k, duration=d, function_name=f),
        texts,
        durations,
        st.sampled_from(["bash_command", "bash_command", "Bash", "mark_task_complete"]),
    ),
    max_size=3,
)


def _calls(draw: Any, step: Step) -> Any:
    """Kept tool calls: the canonical ones under other ids, or changed in one of the ways that keeps them whole."""
    calls = canonical_tool_calls(step.index, step.source, step.commands, step.task_complete)
    for n, call in enumerate(calls):
        call["tool_call_id"] = draw(st.sampled_from([f"call_0_{n}", f"c\u00e9{n}", f'q"{n}\n', "\ud800"]))
    change = draw(
        st.sampled_from(["none", "none", "order", "id", "name", "int", "drop", "extra", "args", "list"])
    )
    if change == "list":
        return {"ids": ["x"]}
    if calls and change == "order":
        calls[0] = {k: calls[0][k] for k in reversed(list(calls[0]))}
    elif calls and change == "id":
        calls[0]["tool_call_id"] = 7
    elif calls and change == "name":
        calls[0]["function_name"] = "other"
    elif calls and change == "int" and "duration" in calls[0]["arguments"]:
        calls[0]["arguments"]["duration"] = 1
    elif change == "drop":
        calls = calls[1:]
    elif change == "extra":
        calls.append({"tool_call_id": "z", "function_name": "bash_command", "arguments": {}})
    elif calls and change == "args":
        calls[0]["arguments"] = {**calls[0]["arguments"], "more": 1}
    return calls


@st.composite
def steps(draw: Any, index: int, common: bool = False) -> Step:
    """A step of any shape; `common`: of the shapes the C build takes on (so that its key is worked out)."""
    if common:
        return draw(_common_step(index))
    return draw(_any_step(index))


_SAID = [p for p in _PIECES if p not in ("<think>", "</think>", "<", "\ud800")] + _WHITE + ["\n"]
said = st.lists(st.sampled_from(_SAID), max_size=8).map("".join)
nonblank = said.filter(lambda text: bool(text.strip()))


@st.composite
def _common_step(draw: Any, index: int) -> Step:
    source = draw(
        st.sampled_from(
            ["agent", "agent", "agent", "user", "system"]
            if index > 1
            else ["user", "user", "user", "user", "system"]
        )
    )
    agent = source == "agent"
    analysis = draw(st.one_of(st.none(), said))
    cmds = [
        Command(keystrokes=draw(said), duration=draw(st.sampled_from([0.5, 1.0, 3.25, 1e16, 0.1])))
        for _ in range(draw(st.integers(0, 3) if agent else st.just(0)))
    ]
    step = Step.model_construct(
        schema_version=1,
        index=index,
        source=source,
        message=draw(
            st.one_of(nonblank, said, st.sampled_from([confirmation(), '{"analysis": 1}', "`x`", " "]))
            if index > 1
            else st.sampled_from(["Do the task.", "Do the task.", "Do the task.", " "])
        ),
        analysis=analysis,
        plan=draw(st.one_of(st.none(), said)) if analysis is not None or draw(st.booleans()) else None,
        reasoning=None,
        commands=cmds,
        observation=draw(st.one_of(st.none(), said, st.just(" \n"))) if agent else None,
        task_complete=agent and draw(st.booleans()),
        harness_control=not agent and index > 1 and draw(st.booleans()),
        private_guidance=index > 1 and draw(st.integers(0, 7)) == 0,
        copied_context=index > 1 and draw(st.integers(0, 7)) == 0,
        model_name=None,
        timestamp=None,
        prompt_tokens=draw(st.one_of(st.none(), st.integers(0, 99))),
        completion_tokens=None,
        cost_usd=draw(st.one_of(st.none(), st.floats(0, 1))),
        extra={},
    )
    extra: dict[str, Any] = {}
    if agent and draw(st.booleans()):
        extra["_atif"] = {"tool_calls": _calls(draw, step)}
    if agent and draw(st.integers(0, 3)) == 0:
        extra[ANSWER] = draw(said)
    if draw(st.integers(0, 3)) == 0:
        extra["cached_tokens"] = 4
    step.extra = extra
    return step


@st.composite
def _any_step(draw: Any, index: int) -> Step:
    source = draw(
        st.sampled_from(
            ["agent", "agent", "user", "system"] if index > 1 else ["user", "user", "system", "agent"]
        )
    )
    message = draw(st.one_of(texts, st.sampled_from([confirmation(), '{ "analysis": 1}', "   "])))
    analysis = draw(st.one_of(st.none(), plain))
    step = Step.model_construct(
        schema_version=1,
        index=index,
        source=source,
        message=message,
        analysis=analysis,
        plan=draw(st.one_of(st.none(), plain)) if analysis is not None or draw(st.booleans()) else None,
        reasoning=draw(st.one_of(st.none(), plain)),
        commands=draw(st.one_of(st.just([]), commands)) if source == "agent" else [],
        observation=draw(st.one_of(st.none(), st.none(), texts, st.just("  \n"))),
        task_complete=draw(st.booleans()),
        harness_control=draw(st.integers(0, 3)) == 0,
        private_guidance=draw(st.integers(0, 5)) == 0,
        copied_context=draw(st.integers(0, 5)) == 0,
        model_name=draw(st.one_of(st.none(), st.just("m"))),
        timestamp=None,
        prompt_tokens=draw(st.one_of(st.none(), st.integers(0, 2**40))),
        completion_tokens=draw(st.one_of(st.none(), st.integers(0, 50))),
        cost_usd=draw(st.one_of(st.none(), st.floats(0, 1), st.just(0.0))),
        extra={},
    )
    extra: dict[str, Any] = {}
    for key in draw(
        st.lists(st.sampled_from(["_atif", ANSWER, "cached_tokens", CONVERSATION_START, "other"]))
    ):
        if key == "_atif":
            extra[key] = draw(
                st.sampled_from(["calls", "calls", "message", "not a dict"]).map(
                    lambda kind: (
                        {"tool_calls": _calls(draw, step)}
                        if kind == "calls"
                        else {"message": [{"type": "image"}]}
                        if kind == "message"
                        else "x"
                    )
                )
            )
        elif key == ANSWER:
            extra[key] = draw(st.one_of(texts, st.just(None), st.just(3)))
        else:
            extra[key] = draw(st.one_of(st.just(True), st.integers(0, 5)))
    step.extra = extra
    return step


@st.composite
def trajectories(draw: Any, common: bool) -> Trajectory:
    """A run of generated steps; `common`: of the shapes the C build works the key out for."""
    n = draw(st.integers(0, 7))
    harness = "terminus-2" if common else draw(st.sampled_from(["terminus-2", "terminus-1"]))
    return Trajectory.model_construct(
        **{
            **Trajectory(trajectory_id="t", harness=harness).__dict__,
            "steps": [draw(steps(i + 1, common)) for i in range(n)],
            "extra": draw(st.sampled_from([{}, {"agent_result": {"n_input_tokens": 5, "cost_usd": 0.5}}])),
        }
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(trajectories(common=True), trajectories(common=False)), min_size=1, max_size=3))
def test_generated_trajectories_get_the_same_rows_and_training_keys(runs: list[Trajectory]):
    _native()
    _same(runs)


_KEYS_IN_C: list[tuple[bool, bool]] = []


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trajectories(common=True))
def test_a_training_key_worked_out_in_c_is_the_python_one(run: Trajectory):
    """Where the C build takes the key on, it is `stored_training`'s, bit for bit."""
    fast = _native()
    done = fast.trajectory_rows("t", run.steps, *_sinks(), uses_terminus1(run))
    in_c = done is not None and done[-1] is not None
    _KEYS_IN_C.append((in_c, in_c and done[-1][0] is not None))
    if in_c:
        assert done[-1] == stored_training(run)


def test_the_generated_runs_reach_the_key_in_c():
    """The comparison above is not vacuous: many of its runs had their key worked out in C."""
    if not _KEYS_IN_C:
        test_a_training_key_worked_out_in_c_is_the_python_one()
    worked_out = sum(in_c for in_c, _ in _KEYS_IN_C)
    keys = sum(key for _, key in _KEYS_IN_C)
    assert worked_out >= len(_KEYS_IN_C) // 2, f"{worked_out} of {len(_KEYS_IN_C)} worked out in C"
    assert keys >= len(_KEYS_IN_C) // 8, f"{keys} of {len(_KEYS_IN_C)} with a key"


def _run(*steps: Step) -> Trajectory:
    return Trajectory(trajectory_id="t", harness="terminus-2", steps=list(steps))


def test_the_common_shapes_are_taken_on_in_c():
    """Harbor's Terminus 2 turns (Analysis/Plan, kept calls under other ids), harness messages and the
    confirmation question are worked out in C, key included; not only handed back to Python."""
    fast = _native()
    agent = Step(
        index=2,
        source="agent",
        message="Analysis: a\nPlan: b",
        analysis="a",
        plan="b",
        commands=[Command(keystrokes="ls  -la \n\tcd /x\nC-c\n", duration=0.5)],
        observation="out",
    )
    agent.extra = {"_atif": {"tool_calls": _harbor_ids(agent)}}
    run = _run(
        Step(index=1, source="user", message="do it"),
        agent,
        Step(index=3, source="user", message=confirmation(), harness_control=True),
        Step(index=4, source="user", message="state: 3", harness_control=True),
        Step(index=5, source="agent", message="done", task_complete=True, extra={ANSWER: "done!"}),
    )
    step_rows, act_rows, cmd_rows, search_rows = _sinks()
    done = fast.trajectory_rows("t", run.steps, step_rows, act_rows, cmd_rows, search_rows, False)
    assert done is not None and done[-1] is not None and done[-1][0] is not None
    assert _rows(cmd_rows, COMMAND_SCHEMA)["command"] == ["ls -la", "\tcd /x"]
    assert _rows(step_rows, STEP_SCHEMA)["extra"][1] == '{"_atif": {"tool_calls": {"ids": ["call_0_1"]}}}'
    _same([run])


def _harbor_ids(step: Step) -> list[dict[str, Any]]:
    calls = canonical_tool_calls(step.index, step.source, step.commands, step.task_complete)
    for n, call in enumerate(calls):
        call["tool_call_id"] = f"call_0_{n + 1}"
    return calls


def test_a_trajectory_it_does_not_take_on_leaves_no_rows_behind():
    """A value of a type the C build does not read (keystrokes that are not text) hands the whole trajectory
    back to Python, with the rows it had appended taken back; Python then fails on it as it always did."""
    fast = _native()
    good = Step(index=1, source="agent", message="m", commands=[Command(keystrokes="ls\n", duration=1.0)])
    bad = Step(
        index=2, source="agent", message="m", commands=[Command.model_construct(keystrokes=5, duration=1.0)]
    )
    step_rows, act_rows, cmd_rows, search_rows = _sinks()
    step_rows.extend([("s", 0, *[None] * len(STEP_FIELDS), None)])
    assert fast.trajectory_rows("t", [good, bad], step_rows, act_rows, cmd_rows, search_rows, False) is None
    assert len(step_rows) == 1 and len(act_rows) == len(cmd_rows) == len(search_rows) == 0
    assert _rows(step_rows, STEP_SCHEMA)["trajectory_id"] == ["s"]
    with pytest.raises(AttributeError):
        located_tables([_run(good, bad)])


def test_usage_sums_are_the_python_ones_for_big_and_odd_values():
    fast = _native()
    steps_ = [
        Step(index=1, source="agent", message="m", prompt_tokens=2**70, cost_usd=0.1),
        Step(index=2, source="agent", message="m", prompt_tokens=0, cost_usd=0.2, completion_tokens=0),
        Step(index=3, source="agent", message="m", cost_usd=math.inf),
    ]
    done = fast.trajectory_rows("t", steps_, *_sinks(), False)
    assert done[4:7] == (2**70, 0, math.inf)
    with pytest.raises(OverflowError):  # beyond int64: Arrow refuses it, as it did
        located_tables([_run(*steps_)])
    _same([_run(*steps_)])
    _same([_run(*steps_[1:])])


def _turn(index: int, source: str, message: str = "m", **fields: Any) -> Step:
    return Step(index=index, source=source, message=message, **fields)


_LS = [Command(keystrokes="ls\n", duration=1.0)]
RULE_CASES = {
    "an agent turn after a removed harness message adds nothing": [
        _turn(1, "user"),
        _turn(2, "agent", commands=_LS),
        _turn(3, "user", "state", harness_control=True),
        _turn(4, "agent", "again"),
    ],
    "the completion claimed twice": [
        _turn(1, "user"),
        _turn(2, "agent", task_complete=True),
        _turn(3, "agent", "sure", task_complete=True),
    ],
    "the confirmation question is dialogue from the user only": [
        _turn(1, "user"),
        _turn(2, "agent", commands=_LS, observation="o"),
        _turn(3, "system", confirmation(), harness_control=True),
        _turn(4, "user", confirmation(), harness_control=True),
        _turn(5, "agent", "yes", task_complete=True),
    ],
    "a turn that did nothing is replaced by the next, which is replaced by none": [
        _turn(1, "user"),
        _turn(2, "agent", "idle"),
        _turn(3, "agent", commands=_LS),
        _turn(4, "agent", "after"),
    ],
    "guidance and copied context never train": [
        _turn(1, "system", "sys"),
        _turn(2, "user", "runbook", private_guidance=True),
        _turn(3, "user", "old", copied_context=True),
        _turn(4, "user", "task"),
        _turn(5, "agent", '{"analysis": "a"}', analysis="a", plan="p"),
    ],
    "system after the start is a user message, joined to the observation": [
        _turn(1, "user"),
        _turn(2, "agent", commands=_LS, observation="out"),
        _turn(3, "system", "note"),
        _turn(4, "agent", "Analysis: x\nPlan: y", analysis="x", plan="y", commands=_LS),
        _turn(5, "user", "trailing"),
    ],
    "no user before the first answer": [_turn(1, "system"), _turn(2, "agent", commands=_LS)],
    "no answer at all": [_turn(1, "user"), _turn(2, "agent", " ")],
}


@pytest.mark.parametrize("case", RULE_CASES)
def test_each_training_rule_gives_the_python_key_in_c(case: str):
    fast = _native()
    run = _run(*RULE_CASES[case])
    done = fast.trajectory_rows("t", run.steps, *_sinks(), False)
    assert done is not None and done[-1] is not None, "worked out in C"
    assert done[-1] == stored_training(run)
    _same([run])


TERM_TEXTS = [
    "İstanbul İİ",  # U+0130 at the very start: lowered as DuckDB lowers it
    "a" * 64 + " " + "b" * 65 + " c" + " d" * 3,  # the longest term kept, one longer dropped, one too short
    "\u212aelvin KELVIN Straße ǅ ﬁle /usr/bin/x ../a.b_c-d",
    "\ud800lone",
    "",
]


@pytest.mark.parametrize("text", TERM_TEXTS)
def test_search_terms_at_the_edges_of_the_rule(text: str):
    _native()
    agent = _turn(2, "agent", text, commands=[Command(keystrokes=text + "\n" + text.upper(), duration=1.0)])
    _same([_run(_turn(1, "user", text), agent)])


def test_the_term_table_keeps_ascii_bytes_only():
    """A search term is ASCII (the rule decodes it so): the C build refuses a table that would keep another
    byte, and one that keeps a byte as anything but itself; the rule's own table is taken."""
    from rsr_core.store.columns import TERM_MAX, TERM_MIN

    fast = _native()
    args = (STEP_FIELDS, str, str, "x")
    keeps_high = bytes(c if c in b"ab" or c == 0xE9 else 0x20 for c in range(256))
    moves = bytes(ord("b") if c == ord("a") else c if c in b"ab" else 0x20 for c in range(256))
    for table in (keeps_high, moves):
        with pytest.raises(ValueError, match="term table"):
            fast.configure(*args, table, TERM_MIN, TERM_MAX)
    native_rows.cache_clear()
    assert native_rows() is not None  # configured again with the rule's table
