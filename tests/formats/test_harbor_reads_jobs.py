"""harbor's own tools read the job dirs we write, for every harness (harbor pinned in
harbor-traces-constraints.txt with its `huggingface` extra, run in its side venv): `harbor traces export` on the
job dir succeeds, its conversations never have two user turns in a row (the confirmation question is inside
the observation of the claim, as harbor's Terminus 2 writes it), harbor's models validate every file; and
`rsr ingest` of the dirs gives back the runs as stored, harness included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsr_core.formats.training import training_rows
from rsr_core.harness.trial_dir import write_job_result, write_trial
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Trajectory
from rsr_core.store import Store
from tests.conftest import answer
from tests.side_venv import QUIET_ENV, named_venv, run_side

pytestmark = pytest.mark.formats
HERE = Path(__file__).parent
HARBOR_TRACES = HERE / "harbor_traces.py"
HARNESSES = ("terminus-2", "rsrt", "statem")
IMPORT_PATHS = {
    "rsrt": "rsr_core.harness.rsrt:RSRTHarness",
    "statem": "rsr_core.harness.statem:StateMHarness",
}
SIDE_ENV = {**QUIET_ENV, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
"""harbor's CLI loads LiteLLM, which otherwise fetches its model price list from the network first."""


@pytest.fixture(scope="session")
def harbor_traces_python() -> Path:
    """Python of the side venv with harbor and its `huggingface` extra (`traces export` builds a dataset)."""
    return named_venv("harbor-traces")


@pytest.fixture(scope="session")
def harbor_traces(harbor_traces_python):
    """Run `harbor traces export --path DIR` (it must succeed), then return the rows harbor's `export_traces`
    makes of DIR ({agent, trial_name, episode, conversations})."""

    def export(path: Path) -> list[dict]:
        cli = subprocess.run(
            [str(harbor_traces_python.with_name("harbor")), "traces", "export", "--path", str(path)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, **SIDE_ENV},
            check=False,
        )
        assert cli.returncode == 0, cli.stderr[-3000:]
        assert "Exported " in cli.stdout, cli.stdout[-2000:]
        rows = json.loads(run_side(harbor_traces_python, [str(HARBOR_TRACES), str(path)]).stdout)["rows"]
        assert rows, f"harbor exported no rows from {path}"
        return rows

    return export


def _roles(row: dict) -> list[str]:
    return [m["role"] for m in row["conversations"]]


def _two_users_in_a_row(rows: list[dict]) -> list[str]:
    """`trial_name episode` of every row with two user turns in a row."""
    return [
        f"{r['trial_name']} {r['episode']}"
        for r in rows
        if any(a == b == "user" for a, b in zip(_roles(r), _roles(r)[1:], strict=False))
    ]


def _check_job(job: Path, harness: str, rows: list[dict], trials: int) -> None:
    """What harbor read of one harness's job dir: every trial, named as harbor names the agent, alternating."""
    assert _two_users_in_a_row(rows) == []
    assert {r["agent"] for r in rows} == {harness}  # the trajectory's agent.name tells the harnesses apart
    assert len({r["trial_name"] for r in rows}) == trials
    for result in job.glob("*/result.json"):
        doc = json.loads(result.read_text())
        assert doc["agent_info"]["name"] == "terminus-2"
        if harness == "terminus-2":
            assert doc["config"]["agent"]["name"] == "terminus-2"
        else:
            assert doc["config"]["agent"]["name"] is None
            assert doc["config"]["agent"]["import_path"] == IMPORT_PATHS[harness]
    if harness == "terminus-2":
        # the confirmation question is asked in the same user turn as the terminal output before it
        asked = [
            m["content"]
            for r in rows
            for m in r["conversations"]
            if m["role"] == "user" and "Are you sure you want to mark the task as complete" in m["content"]
        ]
        assert asked and all(not a.startswith("Are you sure") and "terminal" in a for a in asked)


def _check_jobs(
    root: Path, jobs: dict[str, Path], trials: dict[str, int], harbor_check, harbor_traces
) -> None:
    """harbor's models validate every job dir, and its trace export of the root reads each harness's trials (one
    run of each tool over all of them: harbor's start-up is most of what a run costs)."""
    checked = harbor_check(*jobs.values())
    assert checked["errors"] == []
    total = sum(trials.values())
    assert checked["checked"] == {"trial_result": total, "job_result": len(jobs), "trajectory": total}
    rows = harbor_traces(root)
    assert {r["agent"] for r in rows} == set(jobs)
    for harness, job in jobs.items():
        _check_job(job, harness, [r for r in rows if r["agent"] == harness], trials[harness])


def _assert_read_back(stored: dict[str, Trajectory], out: Path) -> None:
    """`rsr ingest` of the job dirs gives every run back with its harness, steps and training rows."""
    again = Store(":memory:")
    report = ingest_paths(again, [out])
    assert report.errors == [] and report.trajectories_added == len(stored)
    for tid, traj in stored.items():
        back = again.get_trajectory(tid)
        assert back is not None, tid
        assert (back.harness, back.kind, back.reward) == (traj.harness, traj.kind, traj.reward)
        assert back.steps == traj.steps, tid
        assert training_rows(back) == training_rows(traj), tid


def test_demo_runs_of_every_harness_written_by_us_are_read_by_harbor(harbor_traces, harbor_check, tmp_path):
    """The demo's recorded discovery runs (written by an earlier version: harness messages as user steps of
    their own, RSRT and StateM named by harness) ingest, and written again as job dirs harbor reads them."""
    demo = Path(__file__).parents[2] / "data" / "demo" / "jobs"
    store = Store(":memory:")
    report = ingest_paths(store, [demo / f"discovery-{h}" for h in HARNESSES])
    assert report.errors == []
    runs = [store.get_trajectory(r["trajectory_id"]) for r in store.list_trajectories(limit=1000)]
    stored = {t.trajectory_id: t for t in runs if t is not None}
    assert {t.harness for t in stored.values()} == set(HARNESSES)
    assert any(s.harness_control and s.source == "user" for t in stored.values() for s in t.steps)
    out = tmp_path / "jobs"
    counts = {}
    for harness in HARNESSES:
        job = out / f"demo__{harness}"
        trials = sorted((t for t in stored.values() if t.harness == harness), key=lambda t: t.trajectory_id)
        for i, traj in enumerate(trials):
            write_trial(job, traj, traj.task_id or "no-task", f"{traj.task_id}__run{i}")
        write_job_result(job, trials)
        counts[harness] = len(trials)
    _check_jobs(
        out, {harness: out / f"demo__{harness}" for harness in HARNESSES}, counts, harbor_check, harbor_traces
    )
    _assert_read_back(stored, out)


WRITE = "printf 'a,1\\n' > /app/out.txt\n"
WRONG = "printf 'b,2\\n' > /app/out.txt\n"
MODEL = "scripted-harbor"


def _rules() -> list[dict]:
    """One model for the three harnesses: StateM's phases by their prompt; RSRT's first claim fails and it
    fixes the file after "not passed"; Terminus 2 fixes it after the confirmation question, then claims twice."""

    def phase(name: str, turns: list[dict]) -> dict:
        return {"model": MODEL, "when": {"conversation": f"Current phase: {name}\\."}, "turns": turns}

    wrong_claim = answer("w", "p", WRONG, done=True)
    return [
        phase("explore", [answer("e", "p", "ls /app\n", transition="verify"), answer("e", "p", transition="plan")]),
        phase("plan", [answer("p", "p", done=True), answer("p", "write the file", transition="implement")]),
        phase("implement", [answer("i", "p", WRITE, transition="verify")]),
        phase("verify", [answer("v", "p", "cat /app/out.txt\n", done=True)]),
        {"model": MODEL, "when": {"conversation": "not passed"}, "turns": [wrong_claim, answer("f", "p", WRITE, done=True)]},
        {
            "model": MODEL,
            "when": {"conversation": "Are you sure"},
            "turns": [wrong_claim, answer("f", "p", WRITE), answer(done=True), answer(done=True)],
        },
        {"model": MODEL, "turns": [wrong_claim]},
    ]  # fmt: skip


@pytest.fixture
def server_url(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": _rules()}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "rsr_core.cli", "llm", "serve-scripted", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    yield line.split(" on ")[1].split()[0]
    proc.terminate()
    proc.wait(10)


@pytest.mark.docker
def test_rsr_discover_job_dirs_of_every_harness_are_read_by_harbor(
    harbor_traces, harbor_check, server_url, data_dir, docker_engine, tmp_path
):
    db, out = tmp_path / "d.duckdb", tmp_path / "runs"
    harnesses = [arg for h in HARNESSES for arg in ("--harness", h)]
    task = str(data_dir / "tasks" / "harbor" / "csv-report")
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "discover", "--task", task, *harnesses, "--model", MODEL,
         "--db", str(db), "--out", str(out), "--json"],
        env={**os.environ, "RSR_LLM_BASE_URL": server_url},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    runs = {r["harness"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert {h: (r["reward"], r["stop_reason"]) for h, r in runs.items()} == {
        "terminus-2": (1.0, "completed"),
        "rsrt": (1.0, "passed"),
        "statem": (1.0, "completed"),
    }
    store = Store(db)
    stored = {r["trajectory_id"]: store.get_trajectory(r["trajectory_id"]) for r in runs.values()}
    store.close()
    assert all(any(s.harness_control for s in t.steps) for t in stored.values() if t is not None)
    jobs = {job.name.split("__")[-2]: job for job in out.iterdir()}
    assert sorted(jobs) == sorted(HARNESSES)
    _check_jobs(out, jobs, dict.fromkeys(HARNESSES, 1), harbor_check, harbor_traces)
    _assert_read_back({tid: t for tid, t in stored.items() if t is not None}, out)
