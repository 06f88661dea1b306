"""Database files attached to the process's one DuckDB instance while used (rsr_core/store/host.py)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile

import duckdb
import pytest

from rsr_core.models import Step, Trajectory
from rsr_core.store import Store
from rsr_core.store.host import attached
from rsr_core.store.migrations import LATEST_VERSION
from rsr_core.store.sql import scalar, sibling


def _traj(tid: str) -> Trajectory:
    return Trajectory(
        trajectory_id=tid, task_id="t", harness="terminus-2", content_hash=tid,
        steps=[Step(index=1, source="user", message="go")],
    )  # fmt: skip


def _other_process_opens(path) -> subprocess.CompletedProcess:
    code = f"import duckdb; duckdb.connect({str(path)!r}).close()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_a_file_is_attached_while_used_and_let_go_after(tmp_path):
    path = tmp_path / "a.duckdb"
    store = Store(path)
    assert str(path) not in attached()  # migrated and let go
    with store.reading() as cur:
        assert attached()[str(path)] == 1
        with Store(path).reading():  # a second Store of the same file in this process shares the attachment
            assert attached()[str(path)] == 2
        busy = _other_process_opens(path)
        assert busy.returncode != 0 and "lock" in busy.stderr.lower()
        assert scalar(cur, "SELECT count(*) FROM trajectories") == 0
    assert str(path) not in attached()
    assert _other_process_opens(path).returncode == 0


def test_spills_go_to_a_directory_of_the_process_not_the_current_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with Store(tmp_path / "s.duckdb").reading() as cur:
        spill = scalar(cur, "SELECT current_setting('temp_directory')")
    assert spill.startswith(tempfile.gettempdir()) and str(os.getpid()) in spill


def test_two_files_in_one_process_see_only_their_own_tables(tmp_path):
    old = Store(tmp_path / "old.duckdb")
    old.write_trajectories([_traj("x")])
    with old.reading():
        # A new file, migrated while a migrated one is attached beside it: it must not take the other file's
        # schema_migrations table for its own.
        new = Store(tmp_path / "new.duckdb")
        with new.reading() as cur:
            assert scalar(cur, "SELECT max(version) FROM schema_migrations") == LATEST_VERSION
            assert scalar(cur, "SELECT count(*) FROM trajectories") == 0
            assert scalar(cur, "SELECT count(*) FROM runbook_status") == 0  # views bind in their own file
        assert sum(old.summary()["trajectories"].values()) == 1
        assert sum(new.summary()["trajectories"].values()) == 0


def test_a_sibling_cursor_reads_the_same_file(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    store.write_trajectories([_traj("x"), _traj("y")])
    with store.reading() as cur:
        other = sibling(cur)
        try:
            assert scalar(other, "SELECT count(*) FROM trajectories") == 2
        finally:
            other.close()


def test_a_path_with_quotes_and_a_read_only_mismatch(tmp_path):
    path = tmp_path / 'it\'s "odd".duckdb'
    store = Store(path)
    store.write_trajectories([_traj("x")])
    assert sum(Store(path, read_only=True).summary()["trajectories"].values()) == 1
    with store.reading(), pytest.raises(duckdb.ConnectionException, match="read-write in this process"):
        Store(path, read_only=True).summary()


def _child_counts(path: str, out) -> None:
    out.put(sum(Store(path).summary()["trajectories"].values()))


def test_a_forked_child_opens_the_file_with_an_instance_of_its_own(tmp_path):
    path = str(tmp_path / "f.duckdb")
    store = Store(path)
    store.write_trajectories([_traj("x")])
    store.summary()  # the parent's instance exists (and has had the file attached)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_child_counts, args=(path, out))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert out.get(timeout=5) == 1
