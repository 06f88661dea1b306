"""Reward values at ingest: NaN, ±Infinity and values outside [0, 1] refuse the file; the reward-file rules."""

from __future__ import annotations

import shutil

import pytest

from rsr_core.ingest.runner import ingest_paths
from tests.ingest.hostile import atif, write_json

NOT_A_REWARD = [float("nan"), float("inf"), float("-inf"), 1.5, -0.1, 2, True, "1"]


def _trial(tmp_path, data_dir, name: str = "log-parse__ddd"):
    """A copy of a fixture trial with no reward anywhere, ready to be given one."""
    job = tmp_path / "job"
    shutil.copytree(data_dir / "harbor_job", job)
    trial = next(job.rglob(name))
    (trial / "verifier").mkdir(exist_ok=True)
    (trial / "verifier" / "reward.json").unlink(missing_ok=True)
    return trial


def _result(trial, verifier_result) -> None:
    import json

    doc = json.loads((trial / "result.json").read_text())
    doc["verifier_result"] = verifier_result
    (trial / "result.json").write_text(json.dumps(doc))  # NaN and Infinity written as JS literals


def _only_error(report) -> str:
    (error,) = report.errors
    return error.error


@pytest.mark.parametrize("value", NOT_A_REWARD, ids=repr)
def test_result_json_rewards_must_be_finite_and_in_range(store, data_dir, tmp_path, value):
    trial = _trial(tmp_path, data_dir)
    _result(trial, {"rewards": {"reward": value}})
    report = ingest_paths(store, [trial])
    assert _only_error(report).startswith(
        "result.json verifier_result.rewards.reward: expected a finite number in [0, 1], got "
    )
    assert store.get_trajectory("log-parse__ddd") is None


@pytest.mark.parametrize("value", [float("nan"), float("-inf"), 7], ids=repr)
def test_a_reward_directly_on_verifier_result_is_checked(store, data_dir, tmp_path, value):
    trial = _trial(tmp_path, data_dir)
    _result(trial, {"reward": value})
    report = ingest_paths(store, [trial])
    assert _only_error(report).startswith("result.json verifier_result.reward: expected a finite number")
    assert store.get_trajectory("log-parse__ddd") is None


@pytest.mark.parametrize(
    ("text", "shown"),
    [("nan\n", "NaN"), ("inf", "Infinity"), ("-Infinity", "-Infinity"), ("2", "2.0"), ("yes", '"yes"')],
)
def test_reward_txt_is_checked(store, data_dir, tmp_path, text, shown):
    trial = _trial(tmp_path, data_dir)
    (trial / "verifier" / "reward.txt").write_text(text)
    report = ingest_paths(store, [trial])
    assert _only_error(report) == f"verifier/reward.txt: expected a finite number in [0, 1], got {shown}"
    assert store.get_trajectory("log-parse__ddd") is None


def test_a_bad_reward_file_refuses_the_trial_even_when_result_json_has_a_reward(store, data_dir, tmp_path):
    trial = _trial(tmp_path, data_dir, "csv-report__aaa")  # reward 1.0 in result.json
    (trial / "verifier" / "reward.txt").write_text("NaN")
    report = ingest_paths(store, [trial])
    assert _only_error(report).startswith("verifier/reward.txt: expected a finite number")
    assert store.get_trajectory("h-s1") is None


@pytest.mark.parametrize("doc", [{"reward": float("nan")}, {"reward": 1.01}, float("inf"), {"score": -1}])
def test_reward_json_is_checked(store, data_dir, tmp_path, doc):
    trial = _trial(tmp_path, data_dir)
    write_json(trial / "verifier" / "reward.json", doc)
    report = ingest_paths(store, [trial])
    assert _only_error(report).startswith("verifier/reward.json")
    assert "expected a finite number in [0, 1]" in _only_error(report)
    assert store.get_trajectory("log-parse__ddd") is None


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1.5, -1])
def test_atif_extra_rsr_reward_is_checked(store, tmp_path, value):
    path = write_json(tmp_path / "t.json", atif("s1", reward=value))
    report = ingest_paths(store, [path])
    assert _only_error(report).startswith("extra.rsr.reward: expected a finite number in [0, 1], got ")
    assert store.get_trajectory("s1") is None


def test_atif_inside_a_trial_names_the_file(store, data_dir, tmp_path):
    import json

    trial = _trial(tmp_path, data_dir, "csv-report__aaa")
    path = trial / "agent" / "trajectory.json"
    doc = json.loads(path.read_text())
    doc["extra"] = {"rsr": {"reward": float("nan")}}
    path.write_text(json.dumps(doc))
    report = ingest_paths(store, [trial])
    assert _only_error(report) == (
        "agent/trajectory.json: extra.rsr.reward: expected a finite number in [0, 1], got NaN"
    )


@pytest.mark.parametrize(
    ("doc", "reward", "note"),
    [
        ({"reward": 0.25, "accuracy": 0.9}, 0.25, None),  # the `reward` key
        ({"accuracy": 0.75, "model": "x"}, 0.75, None),  # else the only numeric value
        ({"passed": 3, "total": 4}, None, "verifier/reward.json has no 'reward' key and 2 numeric values"),
        ({"status": "ok"}, None, "verifier/reward.json has no 'reward' key and no numeric value"),
        (1, 1.0, None),
    ],
)
def test_the_documented_reward_file_rules(store, data_dir, tmp_path, doc, reward, note):
    trial = _trial(tmp_path, data_dir)
    write_json(trial / "verifier" / "reward.json", doc)
    report = ingest_paths(store, [trial])
    assert report.errors == []
    traj = store.get_trajectory("log-parse__ddd")
    assert traj.reward == reward
    if note is None:
        assert "reward_note" not in traj.extra
    else:
        assert traj.extra["reward_note"].startswith(note)


def test_result_json_rewards_follow_the_same_rules(store, data_dir, tmp_path):
    trial = _trial(tmp_path, data_dir)
    _result(trial, {"rewards": {"tests_passed": 0.5}})
    other = _trial(tmp_path / "b", data_dir)
    _result(other, {"rewards": {"a": 1, "b": 0}})
    report = ingest_paths(store, [trial, other])
    assert report.errors == [] and report.trajectories_added == 2
    found = [store.get_trajectory(r["trajectory_id"]) for r in store.list_trajectories(limit=10)]
    by_origin = {t.origin: t for t in found}
    assert by_origin[str(trial)].reward == 0.5
    unscored = by_origin[str(other)]
    assert unscored.reward is None
    assert unscored.extra["reward_note"].startswith(
        "result.json verifier_result.rewards has no 'reward' key and 2 numeric values"
    )
