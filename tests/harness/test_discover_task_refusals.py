"""`rsr discover --task DIR` on a hostile task directory: one line naming the directory and the problem, exit
status 1, never a traceback, before any sandbox or model is needed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.ingest.hostile import ROOT, harbor_task


def _discover(task_dir, db) -> tuple[int, str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rsr_core.cli",
            "discover",
            "--task",
            str(task_dir),
            "--harness",
            "terminus-2",
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        ("[environment]\ncpus = nan", "[environment] cpus: expected a positive number up to 1,024, got NaN"),
        (
            "[agent]\ntimeout_sec = inf",
            "[agent] timeout_sec: expected a positive number up to 604,800, got Infinity",
        ),
    ],
    ids=["cpus-nan", "timeout-inf"],
)
def test_a_refused_task_dir_is_named_in_the_refusal(tmp_path, toml, problem):
    # Seen: "rsr: [environment] cpus: …" without saying which task directory.
    task = harbor_task(tmp_path / "odd")
    (task / "task.toml").write_text(f'[task]\nname = "odd"\n{toml}\n')
    status, stderr = _discover(task, tmp_path / "x.duckdb")
    assert (status, stderr) == (1, f"rsr: {task}: {problem}\n")


def test_a_task_the_store_cannot_take_is_refused_in_one_line(tmp_path):
    # Seen: a lone surrogate escape in task.yaml ended `rsr discover` with a traceback.
    task = tmp_path / "surrogate"
    task.mkdir()
    (task / "task.yaml").write_text('instruction: "a \\ud800 b"\n')
    (task / "Dockerfile").write_text("FROM rsr-base:bookworm\n")
    (task / "run-tests.sh").write_text("#!/bin/bash\n")
    status, stderr = _discover(task, tmp_path / "x.duckdb")
    assert (status, stderr) == (
        1,
        f"rsr: {task}: could not be stored: 'utf-8' codec can't encode character '\\ud800' in position 2: "
        "surrogates not allowed\n",
    )
