"""Fixtures of the rewrite tests."""

from __future__ import annotations

import pytest

from rsr_core.harness import Terminus2Harness
from rsr_core.ingest.tasks import content_hash, read_harbor_task
from rsr_core.store import Store
from tests.conftest import DEMO_TASKS
from tests.rewrite.pipeline_script import rules

TASK_DIR = DEMO_TASKS / "json-to-env"


@pytest.fixture(scope="session")
def seeded(tmp_path_factory, sandboxes):
    """A database file with the json-to-env task and one successful discovery run of it."""
    from rsr_core.llm.client import LLMClient
    from rsr_core.llm.scripted_server import ScriptedServer

    path = tmp_path_factory.mktemp("seed") / "seed.duckdb"
    store = Store(path)
    task = read_harbor_task(TASK_DIR)
    store.write_task(task, content_hash(TASK_DIR))
    srv = ScriptedServer({"rules": rules()}).start()
    try:
        run = Terminus2Harness(LLMClient(srv.url), sandboxes, "disc").run(task)
    finally:
        srv.stop()
    assert run.reward == 1.0
    store.write_trajectories([run.trajectory])
    store.close()
    return path, run.trajectory.trajectory_id
