"""Shared fixtures: real DuckDB stores and the committed real-format fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.store import Store

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    """tests/data: small fixtures in each real format (see tests/data/make_fixtures.py)."""
    return DATA


@pytest.fixture
def store() -> Store:
    """A fresh in-memory DuckDB store."""
    s = Store(":memory:")
    yield s
    s.close()


@pytest.fixture
def file_store(tmp_path: Path) -> Store:
    """A fresh DuckDB file store."""
    s = Store(tmp_path / "rsr.duckdb")
    yield s
    s.close()


@pytest.fixture(scope="session")
def docker_engine():
    """The real Docker engine with rsr-base:bookworm (see tests/docker_support.py)."""
    from tests.docker_support import require_docker

    return require_docker()


@pytest.fixture(scope="session")
def sandboxes(docker_engine):
    """A sandbox provider on the real engine; task images are built once per session."""
    from rsr_core.sandbox.provider import DockerSandboxProvider
    from rsr_core.settings import Settings

    return DockerSandboxProvider(docker_engine, Settings.from_env(), budget_s=600)


DEMO_TASKS = Path(__file__).resolve().parents[1] / "data" / "demo" / "tasks"


@pytest.fixture
def scripted():
    """Start a scripted OpenAI-protocol server for a script; yields a factory returning (server, client)."""
    from rsr_core.llm.client import LLMClient
    from rsr_core.llm.scripted_server import ScriptedServer

    servers = []

    def start(rules: list[dict], latency_ms: float = 0):
        srv = ScriptedServer({"rules": rules}, latency_ms=latency_ms).start()
        servers.append(srv)
        return srv, LLMClient(srv.url, max_retries=0)

    yield start
    for srv in servers:
        srv.stop()


def answer(
    analysis: str = "a", plan: str = "p", *keys, done: bool = False, duration: float = 0.2, **extra
) -> dict:
    """A Terminus 2 answer for scripted rules."""
    return {
        "analysis": analysis,
        "plan": plan,
        "commands": [{"keystrokes": k, "duration": duration} for k in keys],
        "task_complete": done,
        **extra,
    }


@pytest.fixture
def csv_task(data_dir):
    """A small harbor task (write 'a,1' to /app/out.txt) with hidden tests and a solution."""
    from rsr_core.ingest.tasks import read_harbor_task

    return read_harbor_task(data_dir / "tasks" / "harbor" / "csv-report")


@pytest.fixture(scope="session")
def demo_db_template(tmp_path_factory) -> Path:
    """A database file holding the demo corpus (`build_demo`), built once per session: copy it to change it."""
    from rsr_core.demo import build_demo

    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    store = Store(path)
    assert build_demo(store).errors == []
    store.close()
    return path
