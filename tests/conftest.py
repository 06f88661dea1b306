"""Shared fixtures: real DuckDB stores and the committed real-format fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.store import Store

DATA = Path(__file__).parent / "data"


LONGEST_FIRST = (
    "tests/e2e/test_studio.py",
    "tests/jobs/test_ray.py",
    "tests/sandbox/test_hostile_agents.py",
    "tests/ingest/test_hostile_corpus.py",
    "tests/demo/test_default_job.py",
    "tests/test_interrupts.py",
    "tests/formats/test_harbor_reads_jobs.py",
    "tests/sandbox/test_limits.py",
    "tests/sandbox/test_ground_rules.py",
    "tests/harness/test_harnesses.py",
    "tests/e2e/test_real_corpora.py",
    "tests/sandbox/test_pytest_verdict.py",
    "tests/rewrite/test_pipeline.py",
    "tests/sandbox/test_integrity.py",
    "tests/export/test_typed_datasets.py",
    "tests/rewrite/test_kill_resume.py",
)
"""The modules that take longest, in that order. `make test` hands whole modules to its workers in the order
collected (`--dist loadscope --no-loadscope-reorder`); started first, they end beside the short ones instead of
one worker finishing a long module alone while the others wait."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    # A stable sort: the other modules keep the order they were collected in.
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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
