"""`rsr discover` end to end: the CLI, the scripted server as a separate process, Docker, DuckDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsr_core.store import Store
from tests.conftest import answer

pytestmark = pytest.mark.docker
RSR = [sys.executable, "-m", "rsr_core.cli"]


@pytest.fixture
def server_url(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "rules": [
                    {
                        "model": "scripted-cli",
                        "turns": [
                            answer("w", "p", "printf 'a,1\\n' > /app/out.txt\n"),
                            answer(done=True),
                            answer(done=True),
                        ],
                    }
                ]
            }
        )
    )
    proc = subprocess.Popen(
        [*RSR, "llm", "serve-scripted", "--script", str(script)], stdout=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline()
    yield line.split(" on ")[1].split()[0]
    proc.terminate()
    proc.wait(10)


def test_discover_prints_one_json_line_per_run_and_stores_them(tmp_path, data_dir, server_url, docker_engine):
    db = tmp_path / "d.duckdb"
    env = {**os.environ, "RSR_LLM_BASE_URL": server_url}
    res = subprocess.run(
        [
            *RSR,
            "discover",
            "--task",
            str(data_dir / "tasks" / "harbor" / "csv-report"),
            "--harness",
            "terminus-2",
            "--runs",
            "2",
            "--model",
            "scripted-cli",
            "--db",
            str(db),
            "--out",
            str(tmp_path / "runs"),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [(x["run"], x["reward"], x["turns"], x["stop_reason"]) for x in lines] == [
        (1, 1.0, 3, "completed"),
        (2, 1.0, 3, "completed"),
    ]
    store = Store(db)
    assert store.summary()["trajectories"]["discovery"] == 2
    traj = store.get_trajectory(lines[0]["trajectory_id"])
    assert traj.harness == "terminus-2" and traj.model == "scripted-cli" and traj.reward == 1.0
    trials = list((tmp_path / "runs").glob("*/csv-report__run*/agent/trajectory.json"))
    assert len(trials) == 2
    doc = json.loads(trials[0].read_text())
    assert doc["extra"]["rsr"]["harness"] == "terminus-2" and doc["extra"]["rsr"]["kind"] == "discovery"


def test_discover_without_an_endpoint_says_what_to_do(tmp_path, data_dir):
    env = {k: v for k, v in os.environ.items() if k != "RSR_LLM_BASE_URL"}
    res = subprocess.run(
        [
            *RSR,
            "discover",
            "--task",
            str(data_dir / "tasks" / "harbor" / "csv-report"),
            "--harness",
            "rsrt",
            "--db",
            str(tmp_path / "x.duckdb"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and "RSR_LLM_BASE_URL" in res.stderr and "serve-scripted" in res.stderr


TIGHT = Path(__file__).parents[1] / "sandbox" / "data" / "tasks" / "tight-sandbox"


def test_discover_reports_a_run_that_failed_to_run_and_goes_on_after_a_fork_bomb(tmp_path, docker_engine):
    """Run 1 fails to run (the endpoint refuses the first call); run 2 fork-bombs its sandbox: it is stored
    with its reason and the command ends with status 1, one line per run, no traceback."""
    bomb = answer("a", "p", "bomb() { bomb | bomb & }; bomb\n", duration=3)
    rules = [
        {
            "model": "scripted-bomb",
            "error": {"status": 400, "times": 1},
            "turns": [bomb, answer(done=True), answer(done=True)],
        }
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": rules}))
    server = subprocess.Popen(
        [*RSR, "llm", "serve-scripted", "--script", str(script)], stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().split(" on ")[1].split()[0]
        db = tmp_path / "d.duckdb"
        res = subprocess.run(
            [
                *RSR,
                "discover",
                "--task",
                str(TIGHT),
                "--harness",
                "terminus-2",
                "--runs",
                "2",
                "--model",
                "scripted-bomb",
                "--db",
                str(db),
                "--out",
                str(tmp_path / "runs"),
            ],
            env={**os.environ, "RSR_LLM_BASE_URL": url},
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        server.terminate()
        server.wait(10)
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("run 1: tight-sandbox terminus-2 failed to run: LLMError:")
    assert lines[1].startswith(
        "run 2: tight-sandbox terminus-2 reward=none turns=1 resource_limit (resource_limit: pids"
    )
    assert "1 of 2 run(s) failed to run" in res.stderr
    store = Store(db)
    assert store.summary()["trajectories"]["discovery"] == 1
    traj = store.get_trajectory(lines[1].split()[-1])
    assert traj.exception.startswith("resource_limit: pids limit reached") and traj.reward is None
