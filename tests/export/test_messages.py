"""Training messages reproduce the general-harness conversation and never carry runbooks or harness control."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from rsr_core.export import export
from rsr_core.formats.terminus import parse_terminus
from rsr_core.formats.training import training_steps
from rsr_core.models import Step, Trajectory
from rsr_core.store import Store
from tests.export.chat_rules import plain, sft_messages
from tests.export.corpus import CONFIRM, SYSTEM_PROMPT, add_rewrite, trajectory

ROW_KEYS = {
    "task_id",
    "trajectory_id",
    "source_trajectory_id",
    "runbook_id",
    "reward",
    "kind",
    "harness",
    "model",
    "tools",
}


@pytest.fixture(scope="module")
def rewrites():
    store = Store(":memory:")
    runbooks = [add_rewrite(store, f"rw-{i}", 1.0, False, [], variant=str(i)) for i in range(4)]
    yield store, runbooks
    store.close()


def _sentences(runbooks) -> list[str]:
    out = []
    for rb in runbooks:
        out += [line.removeprefix("- ").strip() for line in rb.text().splitlines()]
    return [s for s in out if len(s) > 12]


def _all_messages(tmp_path, store) -> list[tuple[str, list[str]]]:
    """(format, message texts of every row) for every format."""
    found = []
    export(store, "sft-jsonl", tmp_path / "a.jsonl")
    for line in (tmp_path / "a.jsonl").read_text().splitlines():
        found.append(("sft-jsonl", [m["content"] for m in json.loads(line)["messages"]]))
    export(store, "sharegpt", tmp_path / "b.jsonl")
    for line in (tmp_path / "b.jsonl").read_text().splitlines():
        found.append(("sharegpt", [m["value"] for m in json.loads(line)["conversations"]]))
    export(store, "parquet", tmp_path / "c.parquet")
    for row in pq.read_table(tmp_path / "c.parquet").to_pylist():
        found.append(("parquet", [m["content"] for m in row["messages"]]))
    export(store, "atif", tmp_path / "d")
    for path in (tmp_path / "d").rglob("*.atif.json"):
        doc = json.loads(path.read_text())
        texts = [s["message"] for s in doc["steps"]]
        texts += [r["content"] for s in doc["steps"] for r in (s.get("observation") or {}).get("results", [])]
        found.append(("atif", texts))
    return found


def test_no_runbook_sentence_in_any_message(rewrites, tmp_path):
    store, runbooks = rewrites
    sentences = _sentences(runbooks)
    assert len(sentences) >= 4 * 6
    found = _all_messages(tmp_path, store)
    assert {fmt for fmt, _ in found} == {"sft-jsonl", "sharegpt", "parquet", "atif"}
    assert len(found) == 4 * 4
    for fmt, texts in found:
        for text in texts:
            assert CONFIRM not in text, fmt
            for sentence in sentences:
                assert sentence not in text, (fmt, sentence)


def test_conversation_is_the_terminus_2_dialogue(rewrites):
    store, _ = rewrites
    traj = store.get_trajectory("rw-1")
    assert [s.private_guidance or s.harness_control for s in traj.steps].count(True) == 2
    messages = sft_messages(traj)
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert messages[0]["content"] == SYSTEM_PROMPT
    assert "Current terminal state" in messages[1]["content"]
    first = parse_terminus(messages[2]["content"])
    assert first.analysis == "Nothing seen yet." and [c.keystrokes for c in first.commands] == [
        "ls -la\n",
        "head ledger.csv\n",
    ]
    assert first.commands[0].duration == 0.1 and not first.task_complete
    assert messages[3]["content"] == "ledger.csv\nregion,q,total\n"
    assert parse_terminus(messages[4]["content"]).task_complete
    # the confirmation is harness control: its answer follows the observation of the completion claim
    assert parse_terminus(messages[6]["content"]).plan == "Confirm."
    assert set(json.loads(messages[2]["content"])) == {"analysis", "plan", "commands", "task_complete"}


def test_harness_steps_and_guidance_are_removed_and_turns_alternate():
    steps = [
        Step(index=1, source="system", message="sys"),
        Step(index=2, source="system", message="RUNBOOK", private_guidance=True),
        Step(index=3, source="user", message="task"),
        Step(
            index=4,
            source="agent",
            message="Analysis: a\nPlan: b",
            analysis="a",
            plan="b",
            task_complete=True,
        ),
        Step(index=5, source="user", message="sure?", harness_control=True),
        Step(
            index=6,
            source="agent",
            message="Analysis: c\nPlan: d",
            analysis="c",
            plan="d",
            task_complete=True,
        ),
    ]
    kept = training_steps(steps)
    assert [s.index for s in kept] == [1, 3, 4]  # the bare re-claim answered only the removed question
    messages = sft_messages(Trajectory(trajectory_id="t", steps=steps))
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]
    assert all("RUNBOOK" not in m["content"] and "sure?" not in m["content"] for m in messages)


def test_unparsed_agent_turn_is_kept_verbatim_and_rows_carry_provenance(rewrites, tmp_path):
    store, _ = rewrites
    raw = Step(index=2, source="agent", message="not json at all", observation="Parse error: no JSON")
    messages = sft_messages(
        Trajectory(trajectory_id="t", steps=[Step(index=1, source="user", message="go"), raw])
    )
    assert messages[1] == {"role": "assistant", "content": "not json at all"}
    export(store, "sft-jsonl", tmp_path / "x.jsonl")
    row = json.loads((tmp_path / "x.jsonl").read_text().splitlines()[0])
    assert set(row) == {"messages"} | ROW_KEYS
    assert (row["task_id"], row["runbook_id"], row["source_trajectory_id"], row["reward"]) == (
        "sales-report", "rb-rw-0", "disc-src", 1.0,
    )  # fmt: skip
    assert plain(row["messages"]) and row["tools"] == "[]"


def test_discovery_success_goes_unchanged(tmp_path):
    store = Store(":memory:")
    store.write_trajectories([trajectory("d1", kind="discovery", reward=1.0)])
    export(store, "sft-jsonl", tmp_path / "d.jsonl")
    row = json.loads((tmp_path / "d.jsonl").read_text())
    assert plain(row["messages"]) == sft_messages(store.get_trajectory("d1"))
    # an absent id is the empty string, so the column keeps its type (rsr_core/export/schema.py)
    assert (row["kind"], row["harness"], row["runbook_id"]) == ("discovery", "terminus-2", "")
