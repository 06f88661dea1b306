"""Re-ingest: a unit stored before and unchanged since is not read again; any change to its files is."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rsr_core.ingest.runner import ingest_paths
from rsr_core.store import Store
from rsr_core.store.sql import scalar
from tests.ingest.hostile import atif, rsr, write_json

_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    # Every file Python opens (open(), os.open) raises the "open" audit event with its path. Ingest opens a
    # file one component at a time below its root (rsr_core/ingest/fs.py: an absolute root, then each name
    # relative to the directory opened before), so relative names are joined onto the path opened last.
    if event != "open" or _OPENED is None or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.fsdecode(args[0])
    if not os.path.isabs(path):
        path = os.path.join(_OPENED[-1], path) if _OPENED else path
    _OPENED.append(path)


sys.addaudithook(_audit)  # a hook cannot be removed: it records only while a test sets _OPENED


def _opened_under(root: Path, run) -> tuple[object, set[str]]:
    """`run()`'s result and the names (relative to `root`) of the files under `root` it opened."""
    global _OPENED
    _OPENED = []
    try:
        result = run()
    finally:
        opened, _OPENED = _OPENED, None
    real = os.path.realpath(root)
    return result, {os.path.relpath(p, real) for p in opened if p.startswith(real + os.sep)}


def trial(job: Path, name: str, reward: float = 1.0) -> Path:
    """A harbor trial directory: result.json and agent/trajectory.json."""
    directory = job / name
    write_json(
        directory / "result.json",
        {
            "task_name": f"bench/{name}",
            "trial_name": name,
            "agent_info": {"name": "terminus-2", "version": "1"},
            "verifier_result": {"rewards": {"reward": reward}},
        },
    )
    write_json(directory / "agent" / "trajectory.json", atif(name, task=name))
    return directory


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    job = tmp_path / "jobs" / "job-1"
    write_json(job / "result.json", {"id": "job-1", "n_total_trials": 3})
    for name in ("a", "b", "c"):
        trial(job, name)
    write_json(tmp_path / "jobs" / "loose" / "one.json", atif("loose-one", task="loose"))
    return tmp_path / "jobs"


def _ingest(store: Store, corpus: Path):
    return _opened_under(corpus, lambda: ingest_paths(store, [corpus], workers=0))


def test_unchanged_units_are_not_read_again(file_store: Store, corpus: Path) -> None:
    first, opened = _ingest(file_store, corpus)
    assert (first.trajectories_added, first.errors) == (4, [])
    assert "job-1/a/agent/trajectory.json" in opened and "loose/one.json" in opened
    again, opened = _ingest(file_store, corpus)
    assert (again.files, again.trajectories_added, again.duplicates, again.errors) == (4, 0, 4, [])
    # Only the walk's look at the job's own result.json (a job or a trial?): no file of a unit is opened.
    assert opened <= {"job-1", "job-1/result.json"}, opened


def test_a_changed_file_is_read_again_even_with_its_old_size_and_time(
    file_store: Store, corpus: Path
) -> None:
    _ingest(file_store, corpus)
    path = corpus / "job-1" / "b" / "agent" / "trajectory.json"
    before = path.stat()
    text = path.read_text()
    changed = text.replace("do b", "do B")
    assert len(changed) == len(text) and changed != text
    path.write_text(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # size and mtime as they were
    again, opened = _ingest(file_store, corpus)
    assert "job-1/b/agent/trajectory.json" in opened
    assert not any(p.startswith(("job-1/a/", "job-1/c/", "loose/")) for p in opened), opened
    assert (again.trajectories_added, again.duplicates, again.errors) == (1, 3, [])
    with file_store.reading() as cur:
        assert scalar(cur, "SELECT count(*) FROM steps WHERE message = 'do B'") == 1


def test_a_file_that_appears_makes_its_trial_read_again(file_store: Store, corpus: Path) -> None:
    _ingest(file_store, corpus)
    (corpus / "job-1" / "c" / "verifier").mkdir()
    (corpus / "job-1" / "c" / "verifier" / "test-stdout.txt").write_text("1 passed\n")
    again, opened = _ingest(file_store, corpus)
    assert "job-1/c/verifier/test-stdout.txt" in opened and "job-1/c/agent/trajectory.json" in opened
    assert not any(p.startswith(("job-1/a/", "job-1/b/")) for p in opened), opened
    # Read again, it is the same run (a trial's content hash leaves its verifier output out): a duplicate.
    assert (again.trajectories_added, again.duplicates, again.errors) == (0, 4, [])


def test_a_trajectory_no_longer_stored_is_read_again(file_store: Store, corpus: Path) -> None:
    _ingest(file_store, corpus)
    with file_store.transaction() as cur:
        for table in ("trajectories", "steps", "actions", "commands", "search_terms"):
            cur.execute(f"DELETE FROM {table} WHERE trajectory_id = 'a'")
    again, opened = _ingest(file_store, corpus)
    assert "job-1/a/agent/trajectory.json" in opened
    assert (again.trajectories_added, again.duplicates) == (1, 3)


def test_a_refused_file_is_refused_again(file_store: Store, corpus: Path) -> None:
    (corpus / "loose" / "bad.json").write_text('{"schema_version": "ATIF-v1.4", "steps": [')
    first, _ = _ingest(file_store, corpus)
    again, opened = _ingest(file_store, corpus)
    assert (
        [e.path for e in first.errors]
        == [e.path for e in again.errors]
        == [str(corpus / "loose" / "bad.json")]
    )
    assert "loose/bad.json" in opened


def test_rsr_ingest_twice_adds_nothing_and_says_so(tmp_path: Path, corpus: Path) -> None:
    db = str(tmp_path / "rsr.duckdb")
    code, first, err = rsr("ingest", str(corpus), "--db", db)
    assert code == 0, err
    code, again, err = rsr("ingest", str(corpus), "--db", db)
    assert code == 0, err
    assert first is not None and again is not None
    assert (first["files"], first["trajectories_added"]) == (4, 4)
    assert (again["files"], again["trajectories_added"], again["duplicates"], again["errors"]) == (
        4,
        0,
        4,
        [],
    )
    with Store(db, read_only=True).reading() as cur:
        assert scalar(cur, "SELECT count(*) FROM ingest_signatures") == 4


def test_a_trial_whose_name_is_not_utf8_is_refused_each_time_beside_one_skipped(
    file_store: Store, tmp_path: Path
) -> None:
    job = tmp_path / "odd"
    write_json(job / "result.json", {"id": "odd"})
    trial(job, os.fsdecode(b"trial-\xff"))
    trial(job, "fine")
    first, _ = _ingest(file_store, job)
    assert first.trajectories_added == 1 and len(first.errors) == 1
    again, opened = _ingest(file_store, job)
    assert (again.duplicates, [e.error for e in again.errors]) == (1, [e.error for e in first.errors])
    assert not any(p.startswith("fine/") for p in opened), opened
