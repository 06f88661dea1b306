"""A task's sandbox budgets survive the store: a job run from the database gets the task's own limits."""

from __future__ import annotations

from pathlib import Path

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.store import Store

TASKS = Path(__file__).resolve().parents[1] / "sandbox" / "data" / "tasks"


def test_every_environment_budget_is_stored_and_read_back(tmp_path):
    task = read_harbor_task(TASKS / "few-files")
    assert (task.max_files, task.storage_mb, task.pids_limit) == (20000, 64, 64)
    store = Store(tmp_path / "s.duckdb")
    store.write_task(task, "h1")
    back = Store(tmp_path / "s.duckdb").get_task(task.task_id, with_hidden=True)
    assert back is not None
    assert (back.max_files, back.storage_mb, back.pids_limit, back.memory_mb) == (20000, 64, 64, 192)
