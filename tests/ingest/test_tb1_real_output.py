"""Output written by Terminal-Bench 1's own `tb run` (tests/data/tb1_real, see its README) is read as the tool
wrote it: `rsr ingest` stores it in a DuckDB file, and every expected value comes from the tool's own files
(results.json, run_metadata.json, agent-logs, task.yaml), not from copies in this test."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from rsr_core.cli import main
from rsr_core.ingest.tb1 import instruction_from_prompt
from rsr_core.store import Store

TB1_REAL = Path(__file__).resolve().parents[1] / "data" / "tb1_real"
RUNS = TB1_REAL / "runs"
TASKS = TB1_REAL / "tasks"


def _trials() -> list[tuple[Path, dict, dict]]:
    """(trial dir, its results.json, its run's run_metadata.json) for every trial TB wrote."""
    found = [
        (p.parent, json.loads(p.read_text()), json.loads((p.parents[2] / "run_metadata.json").read_text()))
        for p in sorted(RUNS.glob("*/*/*/results.json"))
    ]
    assert found, "no Terminal-Bench trial fixtures"
    return found


def _episodes(trial_dir: Path) -> list[Path]:
    logs = trial_dir / "agent-logs"
    found = [p for p in logs.glob("episode-*") if p.is_dir()] if logs.is_dir() else []
    return sorted(found, key=lambda p: int(p.name.removeprefix("episode-")))


def _response(episode: Path) -> str:
    """The response file as TB wrote it: Terminus 1 writes response.json, Terminus 2 response.txt."""
    (path,) = [p for p in (episode / "response.txt", episode / "response.json") if p.is_file()]
    return path.read_text()


def _instant(value: object) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


@pytest.fixture
def ingested(tmp_path, capsys) -> tuple[dict, Store]:
    """`rsr ingest tests/data/tb1_real --db FILE --json`: its JSON report and the DuckDB file it wrote."""
    db = tmp_path / "tb1.duckdb"
    assert main(["ingest", str(TB1_REAL), "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    store = Store(db)
    yield report, store
    store.close()


def test_counts_are_the_runs_counts(ingested):
    report, store = ingested
    assert report["errors"] == []
    runs = [json.loads(p.read_text()) for p in RUNS.glob("*/results.json")]
    assert report["trajectories_added"] == sum(len(r["results"]) for r in runs) == len(_trials())
    assert store.count_trajectories() == report["trajectories_added"]
    assert report["tasks_added"] == len([d for d in TASKS.iterdir() if (d / "task.yaml").is_file()])
    rewards = [store.get_trajectory(r["trajectory_id"]).reward for r in store.list_trajectories(limit=1000)]
    assert rewards.count(1.0) == sum(r["n_resolved"] for r in runs)
    assert rewards.count(0.0) == sum(r["n_unresolved"] for r in runs)
    assert store.summary()["steps"] == sum(
        len(_episodes(d)) + 1 for d, _, _ in _trials() if _episodes(d)
    )  # one user step (the first prompt) and one agent step per episode


def test_each_trial_as_tb_wrote_it(ingested):
    _, store = ingested
    for trial_dir, result, meta in _trials():
        traj = store.get_trajectory(result["trial_name"])
        assert traj is not None, result["trial_name"]
        assert traj.task_id == result["task_id"]
        assert traj.reward == (1.0 if result["is_resolved"] else 0.0)
        assert traj.harness == traj.agent_name == meta["agent_name"]
        assert traj.model == meta["model_name"]
        assert traj.instruction == result["instruction"]
        assert _instant(traj.started_at) == _instant(result["trial_started_at"])
        assert _instant(traj.finished_at) == _instant(result["trial_ended_at"])
        failure = result["failure_mode"]
        assert traj.exception == (None if failure in ("unset", "none") else failure)
        assert traj.extra["parser_results"] == result["parser_results"]
        assert traj.extra["total_input_tokens"] == result["total_input_tokens"]
        episodes = _episodes(trial_dir)
        if not episodes:  # the oracle runs solution.sh and writes no agent logs
            assert meta["agent_name"] == "oracle" and traj.steps == []
            continue
        prompts = [(e / "prompt.txt").read_text() for e in episodes]
        assert [s.source for s in traj.steps] == ["user"] + ["agent"] * len(episodes)
        assert traj.steps[0].message == prompts[0]
        agent_steps = traj.steps[1:]
        assert [s.message for s in agent_steps] == [_response(e) for e in episodes]
        assert [s.observation for s in agent_steps] == [*prompts[1:], None]
        answers = [json.loads(_response(e)) for e in episodes]
        assert [[c.keystrokes for c in s.commands] for s in agent_steps] == [
            [c["keystrokes"] for c in a["commands"]] for a in answers
        ]
        assert [s.task_complete for s in agent_steps] == [
            a.get("task_complete", a.get("is_task_complete")) for a in answers
        ]


def test_the_first_prompt_of_each_terminus_holds_the_instruction(ingested):
    """TB's own Terminus 1 and Terminus 2 templates: the instruction found in the stored first step (the first
    prompt, where a run without an instruction in results.json takes it from) is the one TB ran."""
    _, store = ingested
    seen = set()
    for trial_dir, result, meta in _trials():
        if _episodes(trial_dir):
            first = store.get_trajectory(result["trial_name"]).steps[0]
            assert instruction_from_prompt(first.message) == result["instruction"]
            seen.add(meta["agent_name"])
    assert seen == {"terminus-1", "terminus-2"}


def test_tasks_as_task_yaml_says(ingested):
    _, store = ingested
    for task_dir in sorted(d for d in TASKS.iterdir() if (d / "task.yaml").is_file()):
        meta = yaml.safe_load((task_dir / "task.yaml").read_text())
        task = store.get_task(task_dir.name, with_hidden=True)
        assert task.source_format == "terminal-bench-1"
        assert task.instruction == meta["instruction"]
        assert task.agent_timeout_sec == meta["max_agent_timeout_sec"]
        roles = {f.path: f.role for f in task.files}
        assert roles["run-tests.sh"] == roles["tests/test_outputs.py"] == "test"
        assert roles["solution.sh"] == "solution" and roles["Dockerfile"] == "environment"
    for _, result, _ in _trials():  # every trial's instruction is its task's
        assert store.get_task(result["task_id"]).instruction == result["instruction"]


def test_the_fixtures_cover_a_failure_an_agent_timeout_and_both_terminus_agents():
    results = [(r, m) for _, r, m in _trials()]
    assert any(r["is_resolved"] is False and r["failure_mode"] == "unset" for r, _ in results)
    assert any(r["failure_mode"] == "agent_timeout" for r, _ in results)
    assert {m["agent_name"] for _, m in results} == {"oracle", "terminus-1", "terminus-2"}


def test_reingest_adds_nothing(tmp_path, capsys):
    db = str(tmp_path / "again.duckdb")
    assert main(["ingest", str(RUNS), "--db", db, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["ingest", str(RUNS), "--db", db, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["trajectories_added"] == 0 and again["duplicates"] == first["trajectories_added"] > 0
