"""Output written by harbor's own code (tests/data/harbor_real, see its README) is read as the tool wrote it:
every expected value comes from the tool's own files, not from copies in this test."""

from __future__ import annotations

import json
from pathlib import Path

from rsr_core.ingest.runner import ingest_paths

HARBOR_JOBS = Path(__file__).resolve().parents[1] / "data" / "harbor_real" / "jobs"


def _trials() -> list[tuple[Path, dict]]:
    found = [(p.parent, json.loads(p.read_text())) for p in sorted(HARBOR_JOBS.glob("*/*/result.json"))]
    assert found, "no harbor trial fixtures"
    return found


def _by_trial(store) -> dict[str, object]:
    trajs = [store.get_trajectory(r["trajectory_id"]) for r in store.list_trajectories(limit=1000)]
    return {t.extra["trial_name"]: t for t in trajs}


def test_harbor_jobs_counts_match_the_job_results(store):
    report = ingest_paths(store, [HARBOR_JOBS.parent])
    assert report.errors == []
    jobs = [json.loads(p.read_text()) for p in HARBOR_JOBS.glob("*/result.json")]
    assert report.trajectories_added == sum(j["n_total_trials"] for j in jobs) == len(_trials())
    assert report.tasks_added == len(list((HARBOR_JOBS.parent / "tasks").iterdir()))
    assert report.trajectories_added == sum(j["stats"]["n_completed_trials"] for j in jobs)


def test_each_trial_as_harbor_wrote_it(store):
    ingest_paths(store, [HARBOR_JOBS.parent])
    stored = _by_trial(store)
    for trial_dir, result in _trials():
        traj = stored[result["trial_name"]]
        assert traj.task_id == result["task_name"].split("/")[-1]
        assert store.get_task(traj.task_id).source_format == "harbor"
        assert traj.harness == result["agent_info"]["name"]
        assert traj.reward == float(result["verifier_result"]["rewards"]["reward"])
        assert traj.started_at is not None and traj.finished_at is not None
        exc = result["exception_info"]
        assert (traj.exception is None) == (exc is None)
        if exc is not None:
            assert json.loads(traj.exception)["exception_type"] == exc["exception_type"]
        reward_json = trial_dir / "verifier" / "reward.json"
        if reward_json.is_file():  # the partial reward, from the verifier's own rewards object
            assert traj.reward == json.loads(reward_json.read_text())["reward"]
            assert 0 < traj.reward < 1
        atif = trial_dir / "agent" / "trajectory.json"
        if atif.is_file():
            doc = json.loads(atif.read_text())
            assert traj.trajectory_id == (doc.get("trajectory_id") or doc["session_id"])
            assert [s.source for s in traj.steps] == [s["source"] for s in doc["steps"]]
            calls = [
                c["arguments"]["keystrokes"]
                for s in doc["steps"]
                for c in s.get("tool_calls") or []
                if "keystrokes" in c["arguments"]
            ]
            assert [c.keystrokes for s in traj.steps for c in s.commands] == calls
            assert traj.model == doc["agent"]["model_name"]
        else:  # the oracle writes no trajectory
            assert traj.steps == [] and traj.trajectory_id == result["trial_name"]


def test_the_fixtures_cover_a_partial_reward_a_timeout_and_terminus2():
    results = [r for _, r in _trials()]
    rewards = {float(r["verifier_result"]["rewards"]["reward"]) for r in results}
    assert any(0 < x < 1 for x in rewards)
    assert any((r["exception_info"] or {}).get("exception_type") == "AgentTimeoutError" for r in results)
    assert {r["agent_info"]["name"] for r in results} >= {"oracle", "terminus-2"}


def test_reingest_adds_nothing(store):
    first = ingest_paths(store, [HARBOR_JOBS])
    again = ingest_paths(store, [HARBOR_JOBS])
    assert again.trajectories_added == 0 and again.duplicates == first.trajectories_added
