"""Image mapping for offline machines, and both verifier conventions."""

from __future__ import annotations

import pytest

from rsr_core.ingest.tasks import read_tb1_task
from rsr_core.sandbox.images import ImageError, map_image, rewrite_dockerfile
from rsr_core.sandbox.verifier import parse_pytest, run_verifier
from rsr_core.settings import DEFAULT_IMAGE_MAP, Settings
from tests.docker_support import run_solution


def test_pytest_output_parsing():
    assert parse_pytest("PASSED t.py::a\nFAILED t.py::b - assert\n") == (1, 1)
    assert parse_pytest("==== 3 passed, 1 failed, 2 errors in 0.52s ====") == (3, 3)
    assert parse_pytest("===== 2 passed in 0.01s =====") == (2, 0)
    assert parse_pytest("bash: pytest: command not found") == (0, 0)


def test_image_map_from_settings():
    s = Settings.from_env({"RSR_IMAGE_MAP": "ghcr.io/acme/base=my-base:1"})
    assert (
        s.image_map["ghcr.io/acme/base"] == "my-base:1"
        and s.image_map["debian"] == DEFAULT_IMAGE_MAP["debian"]
    )
    with pytest.raises(ValueError, match="RSR_IMAGE_MAP"):
        Settings.from_env({"RSR_IMAGE_MAP": "nonsense"})


@pytest.mark.docker
def test_unpullable_bases_are_mapped_to_local_images(docker_engine):
    mapping = Settings.from_env().image_map
    text = (
        "FROM python:3.13-slim-bookworm AS build\nRUN true\nFROM build\n"
        "FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624\nFROM rsr-base:bookworm\n"
    )
    out = rewrite_dockerfile(text, docker_engine, mapping)
    assert out.splitlines()[0] == "FROM rsr-base:bookworm AS build"
    assert "FROM build" in out  # a stage name is not an image
    assert out.splitlines()[3] == "FROM rsr-base:bookworm"
    with pytest.raises(ImageError, match="RSR_IMAGE_MAP"):
        map_image("registry.example/unknown-thing:1", docker_engine, mapping)


@pytest.mark.docker
def test_terminal_bench_task_runs_its_run_tests_sh(sandboxes, data_dir):
    task = read_tb1_task(data_dir / "tasks" / "tb1" / "hello-world")
    with sandboxes.open(task) as sb:
        assert sb.exec("ls /app /tests 2>&1").output.count("No such file") == 1  # no tests in the image
        failed = run_verifier(sb, task)
    assert failed.reward == 0.0 and "FAILED" in failed.output
    with sandboxes.open(task) as sb:
        sb.exec("cd /app && bash -c true")
        run_solution(sb, task)
        passed = run_verifier(sb, task)
    assert passed.reward == 1.0, passed.output
