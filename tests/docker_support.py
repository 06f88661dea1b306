"""Docker for tests: the real engine and base image, which `make test` sets up. Skips (loudly) only when no
engine can be had at all, e.g. a developer machine without Docker; CI always has one. A missing base image
fails the tests."""

from __future__ import annotations

import warnings

import pytest

from rsr_core.models import Task
from rsr_core.sandbox.docker_sandbox import DockerSandbox
from rsr_core.sandbox.engine import DockerUnavailable, docker_client
from rsr_core.sandbox.images import base_is_current
from rsr_core.settings import Settings


def require_docker():
    """A Docker client with the base image present; a loud skip only when no engine answers."""
    try:
        client = docker_client()
    except DockerUnavailable as exc:
        warnings.warn(f"DOCKER TESTS SKIPPED: {exc}", stacklevel=2)
        pytest.skip(f"no Docker engine: {exc}")
    base = Settings.from_env().base_image
    if not base_is_current(client, base):  # an engine is there, so the image can be had: not a reason to skip
        pytest.fail(
            f"the sandbox base image {base} is missing or stale: run `make base-image` (make test does)"
        )
    return client


def run_solution(sandbox: DockerSandbox, task: Task) -> str:
    """Apply a task's reference solution in the sandbox (harbor `solution/solve.sh`, Terminal-Bench 1
    `solution.sh`) and return its output: the tests check a task with it (the solution must pass, the untouched
    environment must fail)."""
    files = {f.path: f.content for f in task.files if f.role == "solution"}
    script = next((s for s in ("solution/solve.sh", "solution.sh") if s in files), None)
    assert script is not None, f"task {task.task_id} has no solution/solve.sh or solution.sh"
    sandbox.put_files(files, "/solution-rsr")
    res = sandbox.exec(f"bash /solution-rsr/{script}", timeout_s=task.agent_timeout_sec or 600)
    sandbox.exec(["rm", "-rf", "/solution-rsr"])
    return res.output
