"""Budgets that hold against the cheap ways around them: space written into a deleted file that is still open,
and a flood of empty files (many inodes, few bytes).

The tasks set small limits in their task.toml (storage 64 MiB; few-files also max_files 20000).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.formats.reading import FormatError
from rsr_core.harness import Terminus2Harness
from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.sandbox.docker_sandbox import DEFAULT_MAX_FILES
from tests.conftest import answer
from tests.sandbox.test_limits import _left_behind, _stored

pytestmark = pytest.mark.docker
TASKS = Path(__file__).parent / "data" / "tasks"


def _run(scripted, sandboxes, task, label: str, keys: str, duration: float):
    _, llm = scripted(
        [
            {
                "model": "agent",
                "turns": [answer("a", "p", keys, duration=duration), answer(done=True), answer(done=True)],
            }
        ]
    )
    return Terminus2Harness(llm, sandboxes, "agent", max_turns=5).run(task, labels={"rsr.test": label})


def test_writing_into_a_deleted_open_file_counts_against_the_disk_budget(
    scripted, sandboxes, docker_engine, file_store
):
    task = read_harbor_task(TASKS / "tight-sandbox")
    # The shell keeps fd 3 on a file that no longer has a name, so the writable layer's size never shows it.
    keys = "exec 3>/app/held && rm /app/held && dd if=/dev/zero bs=1M count=600 >&3\n"
    r = _run(scripted, sandboxes, task, "deleted-open", keys, duration=30)
    assert r.stop_reason == "resource_limit" and r.reward is None, r.trajectory.exception
    stored = _stored(file_store, r)
    assert stored.exception.startswith("resource_limit: disk budget exceeded"), stored.exception
    assert "in deleted files still open" in stored.exception and "budget 64 MiB" in stored.exception
    assert _left_behind(docker_engine, "deleted-open") == []


def test_a_flood_of_empty_files_ends_the_run_at_the_file_budget(
    scripted, sandboxes, docker_engine, file_store
):
    task = read_harbor_task(TASKS / "few-files")
    assert task.max_files == 20000
    keys = "mkdir -p /app/flood && cd /app/flood && seq 250000 | xargs touch\n"
    r = _run(scripted, sandboxes, task, "file-flood", keys, duration=40)
    assert r.stop_reason == "resource_limit" and r.reward is None, r.trajectory.exception
    stored = _stored(file_store, r)
    assert stored.exception.startswith("resource_limit: file budget exceeded"), stored.exception
    assert "budget 20000 ([environment] max_files)" in stored.exception
    assert _left_behind(docker_engine, "file-flood") == []


def test_the_file_budget_defaults_when_the_task_names_none(sandboxes):
    task = read_harbor_task(TASKS / "tight-sandbox")
    assert task.max_files is None
    assert sandboxes.limits_for(task).max_files == DEFAULT_MAX_FILES == 100_000


@pytest.mark.parametrize("value", ["0", "-5", '"many"', "true", "1.5"])
def test_a_file_budget_that_is_no_budget_refuses_the_task(tmp_path, value):
    import shutil

    task_dir = tmp_path / "task"
    shutil.copytree(TASKS / "few-files", task_dir)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("max_files = 20000", f"max_files = {value}"))
    with pytest.raises(FormatError, match=r"\[environment\] max_files"):
        read_harbor_task(task_dir)
