"""Image mapping for offline machines, and both verifier conventions."""

from __future__ import annotations

import os

import pytest

from rsr_core.ingest.tasks import read_tb1_task
from rsr_core.sandbox.images import ImageError, map_image, rewrite_dockerfile, trim_rootfs
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


def test_the_base_rootfs_is_trimmed_of_docs_manuals_and_translations(tmp_path):
    files = [
        "usr/share/doc/bash/copyright",
        "usr/share/doc/bash/README.gz",
        "usr/share/doc/bash/examples/x.sh",
        "usr/share/man/man1/ls.1.gz",
        "usr/share/locale/de/LC_MESSAGES/coreutils.mo",
        "usr/share/locale/locale.alias",
        "usr/share/info/dir",
        "usr/share/zoneinfo/UTC",
        "usr/bin/ls",
    ]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    os.symlink("bash", tmp_path / "usr/share/doc/bash-alias")
    trim_rootfs(tmp_path)
    kept = sorted(
        str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if not p.is_dir() or p.is_symlink()
    )
    assert kept == [
        "etc/dpkg/dpkg.cfg.d/rsr-trim",
        "usr/bin/ls",
        "usr/share/doc/bash-alias",
        "usr/share/doc/bash/copyright",
        "usr/share/info/dir",
        "usr/share/locale/locale.alias",
        "usr/share/zoneinfo/UTC",
    ]
    assert not (tmp_path / "usr/share/man/man1").exists()
    assert (
        "path-include=/usr/share/doc/*/copyright" in (tmp_path / "etc/dpkg/dpkg.cfg.d/rsr-trim").read_text()
    )


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
