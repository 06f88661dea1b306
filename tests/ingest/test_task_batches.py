"""Task directories are written many to a transaction; what one of them does stays its own."""

from __future__ import annotations

import json
from pathlib import Path

from rsr_core.ingest.runner import Ingestor, ingest_paths
from rsr_core.models import Task
from rsr_core.store import Store
from rsr_core.store.sql import scalar
from tests.ingest.hostile import atif, harbor_task


def test_a_batch_of_task_dirs_is_stored_then_found_unchanged_then_updated(
    file_store: Store, tmp_path: Path
) -> None:
    for name in ("t1", "t2", "t3"):
        harbor_task(tmp_path / "tasks" / name, name)
    first = ingest_paths(file_store, [tmp_path / "tasks"], workers=0)
    assert (first.tasks_added, first.errors) == (3, [])
    again = ingest_paths(file_store, [tmp_path / "tasks"], workers=0)
    assert (again.tasks_added, again.errors) == (0, [])
    (tmp_path / "tasks" / "t2" / "instruction.md").write_text("Write b,2 into /app/out.txt.\n")
    third = ingest_paths(file_store, [tmp_path / "tasks"], workers=0)
    assert (third.tasks_added, third.errors) == (0, [])
    with file_store.reading() as cur:
        assert scalar(cur, "SELECT instruction FROM tasks WHERE task_id = 't2'").startswith("Write b,2")
        assert scalar(cur, "SELECT count(*) FROM tasks") == 3
        files = scalar(cur, "SELECT count(*) FROM task_files WHERE task_id = 't2'")
        assert files == scalar(cur, "SELECT count(*) FROM task_files WHERE task_id = 't1'") > 0


def test_write_tasks_reports_each_and_keeps_the_last_copy_of_a_task_named_twice(store: Store) -> None:
    with store.transaction() as cur:
        statuses = store.write_tasks(
            [
                (Task(task_id="a", instruction="one"), "h1"),
                (Task(task_id="b", instruction="b"), "hb"),
                (Task(task_id="a", instruction="two"), "h2"),
            ],
            cur,
        )
    assert statuses == ["added", "added", "updated"]
    with store.transaction() as cur:
        assert store.write_tasks([(Task(task_id="a", instruction="two"), "h2")], cur) == ["unchanged"]
        assert scalar(cur, "SELECT instruction FROM tasks WHERE task_id = 'a'") == "two"
        assert scalar(cur, "SELECT count(*) FROM tasks") == 2


def test_a_count_past_the_stores_column_is_refused_by_the_reader(file_store: Store, tmp_path: Path) -> None:
    for name in ("good", "bad", "fine"):
        harbor_task(tmp_path / "tasks" / name, name)
    toml = tmp_path / "tasks" / "bad" / "task.toml"
    toml.write_text(toml.read_text() + "[environment]\npids_limit = 2147483648\n")  # one past a 32-bit column
    report = ingest_paths(file_store, [tmp_path / "tasks"], workers=0)
    assert report.tasks_added == 2
    assert [e.path for e in report.errors] == [str(tmp_path / "tasks" / "bad")]
    assert "pids_limit: expected a positive integer up to 2,147,483,647" in report.errors[0].error


def test_a_task_the_store_cannot_take_is_refused_alone(file_store: Store, tmp_path: Path) -> None:
    # the reader's bounds keep such a task out; should one reach the store, the batch fails, then each alone
    ingestor = Ingestor(file_store)
    for name in ("good", "bad", "fine"):
        task = Task(task_id=name, instruction=name, pids_limit=2**31 if name == "bad" else None)
        ingestor._store_task(tmp_path / name, task, f"h-{name}")  # noqa: SLF001
    ingestor._flush_tasks()  # noqa: SLF001
    assert ingestor.report.tasks_added == 2
    assert [e.path for e in ingestor.report.errors] == [str(tmp_path / "bad")]
    assert "could not be stored" in ingestor.report.errors[0].error
    with file_store.reading() as cur:
        assert [r[0] for r in cur.execute("SELECT task_id FROM tasks ORDER BY 1").fetchall()] == [
            "fine",
            "good",
        ]


def test_the_file_is_let_go_when_the_ingest_ends(tmp_path: Path) -> None:
    from rsr_core.store.host import attached

    harbor_task(tmp_path / "tasks" / "t1", "t1")
    db = tmp_path / "rsr.duckdb"
    ingestor = Ingestor(Store(db))  # kept alive: what it holds is not let go by its being collected
    report = ingestor.run([tmp_path / "tasks"], workers=0)
    assert report.tasks_added == 1
    assert str(db) not in attached()  # kept open across batches while it ran, not after


def test_files_the_store_cannot_take_are_found_in_a_large_batch_and_refused_alone(
    store: Store, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    # A lone surrogate in a carried verdict passes parsing and row building (verdicts are not rows); the
    # store's UTF-8 refuses it when the batch is written.
    bad = {7, 8, 41, 99}
    for k in range(120):
        doc = atif(f"s{k:03d}")
        doc["extra"]["rsr"]["transfer_check"] = {
            "answer_transfer": False,
            "deterministic_evidence": ["SURROGATE"],
        }
        text = json.dumps(doc)
        text = text.replace("SURROGATE", "\\ud800" if k in bad else "fine")
        (corpus / f"f{k:03d}.json").parent.mkdir(parents=True, exist_ok=True)
        (corpus / f"f{k:03d}.json").write_text(text)
    report = ingest_paths(store, [corpus], workers=0)
    assert report.trajectories_added == 120 - len(bad)
    assert [Path(e.path).name for e in report.errors] == [f"f{k:03d}.json" for k in sorted(bad)]
    assert all(e.error.startswith("could not be stored:") for e in report.errors), report.errors
    with store.reading() as cur:
        stored = {r[0] for r in cur.execute("SELECT trajectory_id FROM trajectories").fetchall()}
    assert stored == {f"s{k:03d}" for k in range(120) if k not in bad}
