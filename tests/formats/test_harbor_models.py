"""What we write in harbor's formats validates with harbor's own models (harbor pinned in
harbor-constraints.txt, run in its side venv): trial and job result.json, agent/trajectory.json and the ATIF
archive export; and the ATIF version each document declares covers the fields it uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsr_core.export import ExportFilters, export
from rsr_core.formats.atif_read import version_minor
from rsr_core.harness.trial_dir import write_job_result, write_trial
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store
from tests.conftest import answer
from tests.ingest.rich_atif import rich_atif

pytestmark = pytest.mark.formats
ALL = ExportFilters(kinds=["rewrite", "discovery", "eval"], all_trajectories=True)


def _awkward() -> list[Trajectory]:
    """Stored trajectories with what ATIF and harbor's results cannot take as such."""
    steps = [
        Step(index=1, source="system", message="sys", model_name="m", prompt_tokens=3, timestamp="yesterday"),
        Step(index=2, source="user", message="do", reasoning="why", commands=[Command(keystrokes="ls\n")]),
        Step(index=3, source="agent", message="Analysis: a\nPlan: p", commands=[Command(keystrokes="pwd\n")]),
    ]
    return [
        Trajectory(
            trajectory_id="awkward/1",
            task_id="t-odd",
            harness="statem",
            agent_version=None,
            model=None,
            reward=0.25,
            exception="max_turns",
            started_at="not a time",
            content_hash="awk",
            steps=steps,
        ),
        Trajectory(
            trajectory_id="harbor-exc",
            task_id="t-odd",
            exception=json.dumps({"exception_type": "AgentTimeoutError", "exception_message": "late"}),
            content_hash="hx",
            steps=steps[2:],
        ),
        Trajectory(trajectory_id="no-steps", task_id="t-odd", reward=1.0, content_hash="ns", steps=[]),
    ]


def _corpus(data_dir: Path, tmp_path: Path) -> Store:
    store = Store(":memory:")
    (tmp_path / "rich").mkdir()
    (tmp_path / "rich" / "trajectory.json").write_text(json.dumps(rich_atif()))
    assert ingest_paths(store, [data_dir, tmp_path / "rich"]).errors == []
    store.write_trajectories(_awkward())
    return store


def test_trial_and_job_dirs_we_write_validate_and_read_back(harbor_check, data_dir, tmp_path):
    store = _corpus(data_dir, tmp_path)
    trajs = [store.get_trajectory(r["trajectory_id"]) for r in store.list_trajectories(limit=1000)]
    job = tmp_path / "jobs" / "job-1"
    for i, traj in enumerate(trajs):
        task = store.get_task(traj.task_id) if traj.task_id else None
        name = (task.name if task and task.name else traj.task_id) or "no-task"
        write_trial(job, traj, name, f"trial{i:02d}", task_dir=task.path if task and task.path else None)
    write_job_result(job, trajs)
    report = harbor_check(job)
    assert report["errors"] == []
    with_steps = sum(1 for t in trajs if t.steps)
    assert report["checked"] == {"trial_result": len(trajs), "job_result": 1, "trajectory": with_steps}
    again = ingest_paths(store, [job])
    assert again.errors == [] and again.trajectories_added == len(trajs) - with_steps
    assert again.duplicates == with_steps  # a trial without trajectory.json is named by its trial dir


def test_atif_archive_validates_and_declares_the_versions_it_uses(
    harbor_check, atif_field_versions, data_dir, tmp_path
):
    store = _corpus(data_dir, tmp_path)
    export(store, "atif", tmp_path / "archive", ALL)
    report = harbor_check(tmp_path / "archive")
    assert report["errors"] == [] and report["checked"]["trajectory"] > 10
    assert atif_field_versions["Trajectory"]["trajectory_id"] == 7  # what our root trajectory_id needs
    for path in (tmp_path / "archive").rglob("*.atif.json"):
        doc = json.loads(path.read_text())
        used = _versions_used(doc, atif_field_versions)
        assert version_minor(doc["schema_version"]) >= max(used.values()), (path.name, used)


def _versions_used(doc: dict, added: dict[str, dict[str, int]]) -> dict[str, int]:
    """The fields of a document that some ATIF version added, with that version (content-part arrays count
    only where a message or content is a list)."""
    used: dict[str, int] = {}

    def note(model: str, obj: dict) -> None:
        for key, version in added.get(model, {}).items():
            value = obj.get(key)
            if value is not None and (key not in ("message", "content") or isinstance(value, list)):
                used[f"{model}.{key}"] = version

    note("Trajectory", doc)
    for step in doc["steps"]:
        note("Step", step)
        for call in step.get("tool_calls") or []:
            note("ToolCall", call)
        for result in (step.get("observation") or {}).get("results", []):
            note("ObservationResult", result)
            for ref in result.get("subagent_trajectory_ref") or []:
                note("SubagentTrajectoryRef", ref)
    return used or {"none": 0}


def test_rich_v18_input_is_valid_and_so_is_its_export(harbor_check, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "trajectory.json").write_text(json.dumps(rich_atif()))
    assert harbor_check(tmp_path / "in")["errors"] == []  # the test input is what harbor calls ATIF-v1.8
    store = Store(":memory:")
    assert ingest_paths(store, [tmp_path / "in"]).errors == []
    export(store, "atif", tmp_path / "out", ALL)
    report = harbor_check(tmp_path / "out")
    assert report["errors"] == [] and report["checked"]["trajectory"] == 1


@pytest.mark.docker
def test_rsr_discover_job_dirs_validate(harbor_check, docker_engine, data_dir, tmp_path):
    """A real `rsr discover` run (Docker sandbox, the scripted model): one run solves, one stops on max turns."""
    script = tmp_path / "script.json"
    turns = [answer("w", "p", "printf 'a,1\\n' > /app/out.txt\n"), answer(done=True), answer(done=True)]
    script.write_text(json.dumps({"rules": [{"model": "scripted-fmt", "turns": turns}]}))
    rsr = [sys.executable, "-m", "rsr_core.cli"]
    server = subprocess.Popen(
        [*rsr, "llm", "serve-scripted", "--script", str(script)], stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().split(" on ")[1].split()[0]
        env = {**os.environ, "RSR_LLM_BASE_URL": url}
        task = data_dir / "tasks" / "harbor" / "csv-report"
        for max_turns in ("10", "1"):
            done = subprocess.run(
                [
                    *rsr,
                    "discover",
                    "--task",
                    str(task),
                    "--harness",
                    "terminus-2",
                    "--model",
                    "scripted-fmt",
                    "--max-turns",
                    max_turns,
                    "--db",
                    str(tmp_path / "d.duckdb"),
                    "--out",
                    str(tmp_path / "runs"),
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stderr
    finally:
        server.terminate()
        server.wait(10)
    report = harbor_check(tmp_path / "runs")
    assert report["errors"] == []
    assert report["checked"]["trial_result"] == 2 and report["checked"]["job_result"] == 2
    results = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/*/result.json")]
    assert sorted(r["exception_info"] is None for r in results) == [False, True]
    assert all(r["task_id"] == {"path": str(task)} for r in results)


def test_a_handed_off_run_is_atif_with_its_summarisation_embedded_and_reads_back(harbor_check, tmp_path):
    from rsr_core.formats.atif_write import trajectory_document
    from tests.export.test_real_model_rows import _handed_off

    trajectory = _handed_off()
    summary = trajectory.steps[2]
    summary.extra["handoff"] = {
        "request": [
            {"role": "user", "content": "Task: list files."},
            {"role": "user", "content": "Summarise."},
        ],
        "dropped_messages": 1,
    }
    doc = trajectory_document(trajectory)
    [sub] = doc["subagent_trajectories"]
    assert doc["steps"][2]["observation"]["results"][0]["subagent_trajectory_ref"] == [
        {"trajectory_id": sub["trajectory_id"]}
    ]
    assert [s["source"] for s in sub["steps"]] == ["user", "user", "agent"] and sub["steps"][-1][
        "message"
    ] == "summary"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "trajectory.json").write_text(json.dumps(doc))
    report = harbor_check(tmp_path / "out")
    assert report["errors"] == [] and report["checked"]["trajectory"] == 1
    store = Store(":memory:")
    assert ingest_paths(store, [tmp_path / "out"]).errors == []
    [back] = store.list_trajectories()
    read = store.get_trajectory(back["trajectory_id"])
    assert (
        read is not None
        and read.steps[2].observation is None
        and read.steps[2].extra["handoff"]["dropped_messages"] == 1
    )
