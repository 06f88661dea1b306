"""Reading selected trajectories in one pass, also when storage order does not follow the trajectories."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsr_core.formats.training import terminus_json
from rsr_core.store import Store, export_stream
from tests.export.corpus import trajectory

ALL = {"kinds": ["rewrite", "discovery", "eval"], "training": False}


@pytest.fixture
def store():
    s = Store(":memory:")
    for lo in range(0, 12, 4):  # three writes, as ingest batches would
        s.write_trajectories(
            [trajectory(f"t{i:02d}", kind="discovery", harness=("terminus-2", "statem")[i % 2], reward=1.0, variant=str(i))
             for i in range(lo, lo + 4)]
        )  # fmt: skip
    yield s
    s.close()


def _expected(store, ids):
    return [store.get_trajectory(i).model_dump() for i in ids]


def test_stream_gives_whole_trajectories_in_storage_order(store):
    got = [t.model_dump() for t in export_stream.stream_selected(store.cursor(), **ALL)]
    assert got == _expected(store, [f"t{i:02d}" for i in range(12)])
    training = [t.trajectory_id for t in export_stream.stream_selected(store.cursor(), ["discovery"])]
    assert training == [f"t{i:02d}" for i in range(0, 12, 2)]  # statem runs never train


@pytest.mark.parametrize("max_misaligned", [50, 1])
def test_rows_moved_in_storage_are_read_by_id(store, monkeypatch, max_misaligned):
    monkeypatch.setattr(export_stream, "MAX_MISALIGNED", max_misaligned)
    with store.transaction() as cur:  # rewrite some rows so they sit at the end of their tables
        for table, tid in (("steps", "t02"), ("actions", "t05"), ("steps", "t07"), ("actions", "t07")):
            cur.execute(f"CREATE TEMP TABLE moved AS SELECT * FROM {table} WHERE trajectory_id = ?", [tid])
            cur.execute(f"DELETE FROM {table} WHERE trajectory_id = ?", [tid])
            cur.execute(f"INSERT INTO {table} SELECT * FROM moved")
            cur.execute("DROP TABLE moved")
    got = {t.trajectory_id: t.model_dump() for t in export_stream.stream_selected(store.cursor(), **ALL)}
    ids = [f"t{i:02d}" for i in range(12)]
    assert sorted(got) == ids
    assert [got[i] for i in ids] == _expected(store, ids)


def test_terminus_json_is_laid_out_like_json_dumps_indent_2():
    cases = [('a "q" é\n', "p", [("ls\n", 1.0), ("x\ty", 0.25)], False), ("", "", [], True)]
    for analysis, plan, commands, done in cases:
        obj = {
            "analysis": analysis,
            "plan": plan,
            "commands": [{"keystrokes": k, "duration": d} for k, d in commands],
            "task_complete": done,
        }
        assert terminus_json(analysis, plan, commands, done) == json.dumps(obj, ensure_ascii=False, indent=2)


@settings(max_examples=300, deadline=None)
@given(
    st.text(),
    st.text(),
    st.lists(st.tuples(st.text(), st.one_of(st.floats(), st.integers(-(10**20), 10**20))), max_size=3),
    st.booleans(),
)
def test_any_answer_is_laid_out_like_json_dumps_indent_2(analysis, plan, commands, done):
    obj = {
        "analysis": analysis,
        "plan": plan,
        "commands": [{"keystrokes": k, "duration": d} for k, d in commands],
        "task_complete": done,
    }
    assert terminus_json(analysis, plan, commands, done) == json.dumps(obj, ensure_ascii=False, indent=2)
