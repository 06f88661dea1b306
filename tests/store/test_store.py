"""The store on a real DuckDB: targets, migrations, atomic writes."""

from __future__ import annotations

import duckdb
import pytest

from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store
from rsr_core.store.migrations import LATEST_VERSION


def _traj(tid: str, n: int = 3, task: str = "t1") -> Trajectory:
    steps = [Step(index=1, source="user", message="do it")]
    steps += [
        Step(index=i, source="agent", message="x", commands=[Command(keystrokes=f"echo {i}\nls\n")])
        for i in range(2, n + 1)
    ]
    return Trajectory(trajectory_id=tid, task_id=task, harness="terminus-2", content_hash=tid, steps=steps)


def test_accepts_path_memory_and_connection(tmp_path):
    for target in (tmp_path / "a.duckdb", ":memory:", duckdb.connect()):
        s = Store(target)
        assert s.schema_version() == LATEST_VERSION
        s.write_trajectories([_traj("x")])
        assert s.summary()["commands"] == 4


def test_migrations_are_recorded_once(tmp_path):
    path = tmp_path / "m.duckdb"
    Store(path).close()
    s = Store(path)
    rows = s.cursor().execute("SELECT version FROM schema_migrations").fetchall()
    assert [r[0] for r in rows] == list(range(1, LATEST_VERSION + 1))


def test_a_failed_write_leaves_nothing(store):
    store.write_trajectories([_traj("a")])
    with pytest.raises(duckdb.ConstraintException):
        store.write_trajectories([_traj("b"), _traj("a")])  # duplicate primary key in the batch
    assert store.summary()["trajectories"]["discovery"] == 1
    assert store.summary()["steps"] == 3


def test_read_only_store_cannot_write(tmp_path):
    path = tmp_path / "r.duckdb"
    Store(path).close()
    ro = Store(path, read_only=True)
    with pytest.raises(duckdb.Error):
        ro.write_trajectories([_traj("z")])


def test_unknown_tasks_are_added_as_stubs(store):
    added = store.write_trajectories(
        [_traj("a", task="alpha"), _traj("b", task="alpha"), _traj("c", task="beta")]
    )
    assert added == 2
    assert store.get_task("alpha").source_format == "trajectory-only"
