"""Rows built in parser processes: the same stored rows as serial parsing, per-file failures, renames."""

from __future__ import annotations

import json

from rsr_core.ingest.runner import ingest_paths
from rsr_core.store import Store

TABLES = {
    "trajectories": "trajectory_id, task_id, kind, harness, reward, n_steps, n_commands, content_hash",
    "steps": "trajectory_id, step_index, source, message, observation, prompt_tokens, harness_control",
    "actions": "trajectory_id, step_index, action_index, function_name, keystrokes, duration",
    "commands": "trajectory_id, seq, step_index, action_index, command",
    "search_terms": "term, trajectory_id",
}


def _atif(session: str, n: int, tokens: int = 10) -> dict:
    steps = [{"step_id": 1, "source": "user", "message": f"task {session}"}]
    for i in range(2, n + 2):
        call = {"tool_call_id": f"c{i}", "function_name": "bash_command",
                "arguments": {"keystrokes": f"echo  {session}-{i}\nls -la\nC-c\n", "duration": 0.5}}  # fmt: skip
        steps.append({"step_id": i, "source": "agent", "message": f"Analysis: a{i}\nPlan: p{i}",
                      "tool_calls": [call], "metrics": {"prompt_tokens": tokens},
                      "observation": {"results": [{"source_call_id": f"c{i}", "content": f"out {i}"}]}})  # fmt: skip
    rsr = {"task_id": f"task-{n % 5}", "harness": "terminus-2", "kind": "discovery", "reward": 1.0}
    return {"schema_version": "ATIF-v1.6", "session_id": session, "agent": {"name": "terminus-2"},
            "steps": steps, "extra": {"rsr": rsr}}  # fmt: skip


def _dump(store: Store) -> dict[str, list[tuple]]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT {c} FROM {t} ORDER BY ALL").fetchall() for t, c in TABLES.items()}


def test_parallel_and_serial_parsing_store_the_same_rows(tmp_path):
    for i in range(70):  # above the parallel threshold; chunks of 32 files
        (tmp_path / f"t{i:02d}.json").write_text(json.dumps(_atif(f"s{i}", 1 + i % 7)))
    (tmp_path / "t05.json").write_text(json.dumps(_atif("s5", 3, tokens=2**70)))  # no 64-bit integer
    results = []
    for workers in (1, 2):
        store = Store(":memory:")
        report = ingest_paths(store, [tmp_path], workers=workers)
        assert report.trajectories_added == 69 and report.files == 70
        assert [e.path.endswith("t05.json") for e in report.errors] == [True]
        assert report.errors[0].error.startswith("could not be stored:")
        results.append(_dump(store))
    assert results[0] == results[1]
    assert len(results[0]["commands"]) == 2 * sum(1 + i % 7 for i in range(70) if i != 5)


def test_same_id_other_content_in_one_chunk_keeps_both(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(_atif("same", 2)))
    (tmp_path / "b.json").write_text(json.dumps(_atif("same", 3)))
    store = Store(":memory:")
    assert ingest_paths(store, [tmp_path], workers=1).trajectories_added == 2
    rows = _dump(store)
    ids = sorted({r[0] for r in rows["steps"]})
    assert ids[0] == "same" and ids[1].startswith("same~")
    assert sorted(r[0] for r in rows["commands"]).count(ids[1]) == 6
