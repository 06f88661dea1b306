"""What this tool writes (harbor trial dirs, ATIF exports) is recognised when it is ingested again."""

from __future__ import annotations

from rsr_core.demo import DEMO_JOBS
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Command, Step, Trajectory


def test_recorded_runs_and_the_trial_dirs_written_for_them_are_one_trajectory(store, tmp_path):
    from rsr_core.harness.trial_dir import write_trial

    traj = Trajectory(
        trajectory_id="run-1",
        task_id="t",
        harness="terminus-2",
        reward=1.0,
        content_hash="abc123",
        steps=[
            Step(index=1, source="user", message="do"),
            Step(
                index=2,
                source="agent",
                analysis="a",
                plan="p",
                commands=[Command(keystrokes="ls\n")],
                observation="x",
            ),
        ],
    )
    store.write_trajectories([traj])
    write_trial(tmp_path / "job", traj, "org/t", "t__1")
    report = ingest_paths(store, [tmp_path / "job"])
    assert report.errors == [] and report.trajectories_added == 0 and report.duplicates == 1


def test_demo_jobs_reingest_as_duplicates(store):
    first = ingest_paths(store, [DEMO_JOBS])
    again = ingest_paths(store, [DEMO_JOBS])
    assert first.trajectories_added > 0 and again.trajectories_added == 0
    assert again.duplicates == first.trajectories_added
