"""Runs that break their sandbox end bounded, are stored with their reason, and leave no container behind.

The tight-sandbox task sets small limits in its task.toml (pids 64, memory 192 MiB, storage 64 MiB).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.harness import Terminus2Harness
from rsr_core.harness.tmux import SLACK_S
from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.sandbox.labels import LABEL, SNAPSHOT_REPOSITORY
from tests.conftest import answer

pytestmark = pytest.mark.docker
TASKS = Path(__file__).parent / "data" / "tasks"


@pytest.fixture(scope="module")
def tight():
    """Write `ok` to /app/answer.txt, in a sandbox with small limits."""
    return read_harbor_task(TASKS / "tight-sandbox")


def _run(scripted, sandboxes, task, label: str, keys: str, duration: float = 3.0, slack_s: float = SLACK_S):
    _, llm = scripted(
        [
            {
                "model": "agent",
                "turns": [answer("a", "p", keys, duration=duration), answer(done=True), answer(done=True)],
            }
        ]
    )
    harness = Terminus2Harness(llm, sandboxes, "agent", max_turns=5, terminal_slack_s=slack_s)
    return harness.run(task, labels={"rsr.test": label})


def _left_behind(engine, label: str) -> list:
    containers = engine.containers.list(all=True, filters={"label": [f"{LABEL}=1", f"rsr.test={label}"]})
    images = engine.images.list(name=SNAPSHOT_REPOSITORY, filters={"label": f"rsr.test={label}"})
    return containers + images


def _stored(file_store, result):
    file_store.write_trajectories([result.trajectory])
    return file_store.get_trajectory(result.trajectory.trajectory_id)


def test_fork_bomb_ends_the_run_with_resource_limit(scripted, sandboxes, docker_engine, tight, file_store):
    r = _run(scripted, sandboxes, tight, "fork-bomb", "bomb() { bomb | bomb & }; bomb\n")
    assert r.stop_reason == "resource_limit" and r.reward is None
    stored = _stored(file_store, r)
    assert stored.exception.startswith("resource_limit: pids limit reached"), stored.exception
    assert _left_behind(docker_engine, "fork-bomb") == []


def test_memory_hog_ends_the_run_with_resource_limit(scripted, sandboxes, docker_engine, tight, file_store):
    r = _run(scripted, sandboxes, tight, "oom", "python3 -c 'x = bytearray(400 * 1024 * 1024)'\n")
    assert r.stop_reason == "resource_limit" and r.reward is None
    assert _stored(file_store, r).exception.startswith("resource_limit: out of memory")
    assert _left_behind(docker_engine, "oom") == []


def test_disk_filler_is_frozen_at_its_storage_budget(scripted, sandboxes, docker_engine, tight, file_store):
    r = _run(
        scripted, sandboxes, tight, "disk", "dd if=/dev/zero of=/app/fill bs=1M count=1000\n", duration=30
    )
    assert r.stop_reason == "resource_limit" and r.reward is None
    stored = _stored(file_store, r)
    assert stored.exception.startswith("resource_limit: disk budget exceeded"), stored.exception
    assert "budget 64 MiB" in stored.exception
    assert "/app/fill" in {c.path for c in stored.changed_paths}
    assert _left_behind(docker_engine, "disk") == []


def test_wedged_terminal_ends_the_run_and_is_still_verified(
    scripted, sandboxes, docker_engine, tight, file_store
):
    r = _run(
        scripted,
        sandboxes,
        tight,
        "wedged",
        "echo ok > /app/answer.txt; pkill -STOP tmux\n",
        duration=1,
        slack_s=8,
    )
    assert r.stop_reason == "sandbox_error", r.trajectory.exception
    stored = _stored(file_store, r)
    assert stored.exception.startswith("sandbox_error:") and "no answer" in stored.exception
    assert stored.steps[-1].extra.get("sandbox_failure")
    assert r.reward == 1.0  # the tests ran in a fresh container from the frozen one
    assert _left_behind(docker_engine, "wedged") == []


def test_agent_killing_every_process_ends_the_run_and_is_still_verified(
    scripted, sandboxes, docker_engine, tight
):
    r = _run(scripted, sandboxes, tight, "kill-all", "echo ok > /app/answer.txt; kill -9 -1\n", duration=1)
    assert r.stop_reason == "sandbox_error" and r.reward == 1.0, r.trajectory.exception
    assert _left_behind(docker_engine, "kill-all") == []


def test_sigterm_ignoring_foreground_process_does_not_hang_the_run(scripted, sandboxes, docker_engine, tight):
    keys = "trap '' INT TERM; while :; do sleep 1; done\n"
    _, llm = scripted(
        [
            {
                "model": "agent",
                "turns": [
                    answer("a", "p", keys),
                    answer("stuck", "interrupt", "C-c", "kill %1\n"),
                    answer(done=True),
                    answer(done=True),
                ],
            }
        ]
    )
    r = Terminus2Harness(llm, sandboxes, "agent", max_turns=6).run(tight, labels={"rsr.test": "sigterm"})
    assert (r.stop_reason, r.reward) == ("completed", 0.0)
    assert _left_behind(docker_engine, "sigterm") == []
