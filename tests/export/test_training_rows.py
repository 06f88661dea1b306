"""Training rows that chat trainers accept: instruction first, roles alternating, an assistant turn last, no
empty contents; runs that cannot make such a row (or should not train) are left out with their reason, and the
preview counts exactly what the write produces."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from rsr_core.export import ExportFilters, export, preview
from rsr_core.formats.training import NO_OUTPUT, training_row
from rsr_core.models import ChangedPath, Command, Step, Trajectory
from rsr_core.store import Store
from tests.export.chat_rules import chat_problems
from tests.export.corpus import add_rewrite, add_task, trajectory


def _agent(index: int, analysis: str, *keys: str, observation: str | None = None, done: bool = False) -> Step:
    return Step(
        index=index,
        source="agent",
        message=f"Analysis: {analysis}\nPlan: p",
        analysis=analysis,
        plan="p",
        commands=[Command(keystrokes=k) for k in keys],
        observation=observation,
        task_complete=done,
    )


def _traj(tid: str, steps: list[Step], **fields) -> Trajectory:
    for i, step in enumerate(steps, 1):
        step.index = i
    return Trajectory(trajectory_id=tid, task_id="t", kind="discovery", harness="terminus-2", reward=1.0,
                      content_hash=tid, steps=steps, **fields)  # fmt: skip


def test_trailing_observation_is_dropped_and_the_row_ends_with_the_assistant():
    steps = [Step(index=1, source="user", message="do it"), _agent(2, "a", "ls\n", observation="x\n")]
    messages, why = training_row(_traj("t1", steps))
    assert why is None and [m["role"] for m in messages] == ["user", "assistant"]
    assert chat_problems(messages) == []


def test_instruction_comes_first_from_the_run_else_the_task_else_none():
    agent_only = [_agent(1, "a", "ls\n", observation="x"), _agent(2, "b", "cat y\n", observation="y")]
    messages, why = training_row(_traj("t2", agent_only, instruction="Write y."))
    assert why is None and messages[0] == {"role": "user", "content": "Write y."}
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    messages, why = training_row(_traj("t3", [s.model_copy() for s in agent_only]), "From the task.")
    assert why is None and messages[0]["content"] == "From the task."
    assert training_row(_traj("t4", [s.model_copy() for s in agent_only])) == ([], "no_instruction")
    # a system prompt alone does not carry the instruction: it is added as the first user message
    with_system = [Step(index=1, source="system", message="You are an agent."), *agent_only]
    messages, _ = training_row(_traj("t5", [s.model_copy() for s in with_system], instruction="Write y."))
    assert [m["role"] for m in messages[:3]] == ["system", "user", "assistant"]


def test_no_agent_turn_is_no_steps():
    assert training_row(_traj("t6", [Step(index=1, source="user", message="hi")])) == ([], "no_steps")
    assert training_row(_traj("t7", [])) == ([], "no_steps")
    guidance_only = [Step(index=1, source="user", message="go"), _agent(2, "a", "ls\n")]
    guidance_only[1].harness_control = True
    assert training_row(_traj("t8", guidance_only))[1] == "no_steps"


def test_empty_contents_merged_roles_and_copied_context():
    steps = [
        Step(index=1, source="system", message="sys"),
        Step(index=2, source="user", message="old context", copied_context=True),
        Step(index=3, source="user", message="the task"),
        Step(index=4, source="user", message="   "),
        Step(index=5, source="user", message="more details"),
        _agent(6, "a", "ls\n", observation=""),  # an empty observation is no message
        Step(index=7, source="system", message="note from the harness"),
        _agent(8, "b", "cat f\n", observation="f"),
        Step(index=9, source="agent", message=""),  # an empty answer is no turn
        _agent(10, "c", done=True),
    ]
    messages, why = training_row(_traj("t9", steps))
    assert why is None and chat_problems(messages) == []
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert messages[1]["content"] == "the task\n\nmore details"
    assert messages[3]["content"] == "note from the harness"  # a later system message is a user turn
    assert all("old context" not in m["content"] for m in messages)


def test_two_assistant_turns_in_a_row():
    steps = [Step(index=1, source="user", message="go"), _agent(2, "thinking"), _agent(3, "act", "ls\n")]
    messages, _ = training_row(_traj("t10", steps))
    assert [json.loads(m["content"])["analysis"] for m in messages[1:]] == ["act"]  # the idle one is dropped
    steps = [Step(index=1, source="user", message="go"), _agent(2, "a", "ls\n"), _agent(3, "b", "pwd\n")]
    messages, _ = training_row(_traj("t11", steps))
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"] == NO_OUTPUT and chat_problems(messages) == []


@pytest.fixture
def mixed(tmp_path):
    """Kept rewrites (one scripted), a tampered discovery success, runs without instruction or agent turns."""
    store = Store(tmp_path / "m.duckdb")
    add_task(store, "sales-report", "data-processing")
    add_rewrite(store, "rw-a", 1.0, False, [], variant="a")
    add_rewrite(store, "rw-dup", 1.0, False, [], variant="a")  # same messages as rw-a
    ok = trajectory("d-ok", task="log-parse", kind="discovery", reward=1.0, variant="d")
    scripted = trajectory("d-scripted", task="log-parse", kind="discovery", reward=1.0, variant="s")
    scripted.scripted = True
    tampered = trajectory("d-tampered", task="log-parse", kind="discovery", reward=1.0, variant="t")
    tampered.verifier_tampered = True
    tampered.changed_paths = [ChangedPath(path="/usr/bin/pytest", change="changed", verifier_ground=True)]
    no_instr = _traj("d-noinstr", [_agent(1, "a", "ls\n", observation="x")])
    no_instr.task_id = "unknown-task"
    no_steps = _traj("d-nosteps", [Step(index=1, source="user", message="hello")])
    store.write_trajectories([ok, scripted, tampered, no_instr, no_steps])
    yield store
    store.close()


def test_left_out_reasons_and_preview_equal_the_write(mixed, tmp_path):
    p = preview(mixed)
    summary = export(mixed, "sft-jsonl", tmp_path / "o.jsonl")
    assert (p.exported, p.duplicates, p.left_out) == (summary.exported, summary.duplicates, summary.left_out)
    assert summary.exported == 2 and summary.duplicates == 1
    left = summary.left_out
    assert (left.scripted, left.verifier_tampered, left.no_instruction, left.no_steps) == (1, 1, 1, 1)
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert sorted(r["trajectory_id"] for r in rows) == ["d-ok", "rw-a"]
    card = (tmp_path / "o.card.md").read_text()
    assert (
        "scripted, not sampled" in card
        and "Scripted runs (model answers replayed, not sampled): left out (1" in card
    )
    with_scripted = ExportFilters(include_scripted=True)
    assert preview(mixed, with_scripted).exported == 3
    summary = export(mixed, "sft-jsonl", tmp_path / "s.jsonl", with_scripted)
    assert summary.exported == 3 and summary.left_out.scripted == 0
    everything = ExportFilters(all_trajectories=True, kinds=["rewrite", "discovery", "eval"])
    archive = export(mixed, "atif", tmp_path / "arch", everything)
    assert archive.left_out.no_steps == 1 and archive.exported == 6  # tampered and scripted runs archived
    assert preview(mixed, everything).exported == 6


def test_a_count_builds_only_rows_the_store_cannot_keep_and_calls_its_hook_between_them(mixed):
    calls = []
    p = preview(mixed, between=lambda: calls.append(1))
    assert p == preview(mixed)
    # d-noinstr has no user message before its first agent turn: its row takes its task's instruction, which
    # may change, so it is built when counted; every other row's key was stored when it was written.
    assert len(calls) == 1


@pytest.mark.parametrize("fmt", ["sft-jsonl", "sharegpt", "parquet", "atif"])
def test_every_row_of_every_format_follows_the_chat_rules(mixed, tmp_path, fmt):
    out = tmp_path / ("o.parquet" if fmt == "parquet" else "o" if fmt == "atif" else "o.jsonl")
    export(mixed, fmt, out, ExportFilters(include_scripted=True))
    if fmt == "parquet":
        rows = [r["messages"] for r in pq.read_table(out).to_pylist()]
    elif fmt == "sharegpt":
        roles = {"system": "system", "human": "user", "gpt": "assistant"}
        rows = [
            [{"role": roles[c["from"]], "content": c["value"]} for c in json.loads(line)["conversations"]]
            for line in out.read_text().splitlines()
        ]
    elif fmt == "atif":
        docs = [json.loads(p.read_text()) for p in out.rglob("*.atif.json")]
        assert docs and all(d["steps"] and d["steps"][-1]["source"] == "agent" for d in docs)
        assert all(not s.get("extra", {}).get("harness_control") for d in docs for s in d["steps"])
        return
    else:
        rows = [json.loads(line)["messages"] for line in out.read_text().splitlines()]
    assert len(rows) == 3
    for messages in rows:
        assert chat_problems(messages) == [], messages
