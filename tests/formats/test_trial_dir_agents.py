"""How a trial's result.json names its agent: our harnesses harbor does not know by their import path, with
harbor's Terminus 2 as `agent_info.name` (what `harbor traces export` needs), and `rsr ingest` still tells the
harness from the trial (harbor's own reading: tests/formats/test_harbor_reads_jobs.py)."""

from __future__ import annotations

import json

import pytest

from rsr_core.harness.trial_dir import write_trial
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Step, Trajectory
from rsr_core.store import Store


def _run(harness: str, steps: bool = True) -> Trajectory:
    return Trajectory(
        trajectory_id=f"{harness}-t-1",
        task_id="t",
        harness=harness,
        agent_name=harness,
        agent_version="rsr-studio",
        model="m",
        reward=1.0,
        content_hash=f"h-{harness}",
        steps=[
            Step(index=1, source="user", message="Do it."),
            Step(
                index=2,
                source="agent",
                message="Analysis: a\nPlan: p",
                analysis="a",
                plan="p",
                observation="$ ",
            ),
        ]
        if steps
        else [],
    )


@pytest.mark.parametrize(
    ("harness", "config", "info"),
    [
        ("terminus-2", {"name": "terminus-2", "model_name": "m"}, "terminus-2"),
        (
            "rsrt",
            {"name": None, "import_path": "rsr_core.harness.rsrt:RSRTHarness", "model_name": "m"},
            "terminus-2",
        ),
        (
            "statem",
            {"name": None, "import_path": "rsr_core.harness.statem:StateMHarness", "model_name": "m"},
            "terminus-2",
        ),
        ("claude-code", {"name": "claude-code", "model_name": "m"}, "claude-code"),
    ],
)
def test_the_agent_is_named_as_harbor_names_it_and_ingest_keeps_the_harness(tmp_path, harness, config, info):
    trial = write_trial(tmp_path / "job", _run(harness), "t", "t__1")
    result = json.loads((trial / "result.json").read_text())
    assert result["config"]["agent"] == config == json.loads((trial / "config.json").read_text())["agent"]
    assert result["agent_info"]["name"] == info
    store = Store(":memory:")
    assert ingest_paths(store, [tmp_path / "job"]).errors == []
    back = store.get_trajectory(f"{harness}-t-1")
    assert back is not None and back.harness == harness


def test_a_run_without_steps_keeps_its_harness_name_for_ingest(tmp_path):
    """No trajectory file for harbor's tools to read, and nothing but `agent_info` to name the harness."""
    trial = write_trial(tmp_path / "job", _run("statem", steps=False), "t", "t__1")
    result = json.loads((trial / "result.json").read_text())
    assert not (trial / "agent").exists()
    assert result["agent_info"]["name"] == "statem"
    assert result["config"]["agent"]["import_path"] == "rsr_core.harness.statem:StateMHarness"
    store = Store(":memory:")
    assert ingest_paths(store, [tmp_path / "job"]).errors == []
    back = store.get_trajectory("t__1")
    assert back is not None and back.harness == "statem"
