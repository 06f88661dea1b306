"""Values a corpus may not smuggle in: nesting beyond the limit, a key named twice in one object, timestamps
of another type; and an episode whose response was never recorded is stored as such."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rsr_core.formats.reading import (
    DEPTH_LIMIT_TEXT,
    MAX_JSON_DEPTH,
    FormatError,
    json_path,
    parse_json_bytes,
    too_deep,
)
from rsr_core.ingest.runner import ingest_paths
from rsr_core.ingest.tb1 import MISSING_RESPONSE
from rsr_core.store.columns import duration_s, parse_time
from tests.ingest.hostile import atif, errors_by_name, rsr, write_json

TB1_RUN = Path(__file__).resolve().parents[1] / "data" / "tb1_runs" / "2025-02-01__10-00-00"
TB1_TRIAL = "hello-world.1-of-1.2025-02-01__10-00-00"
TIME = "an ISO 8601 time string, epoch seconds (0 to 253402300799) or null"
TWICE = "appears twice in one object (which value is meant is ambiguous); not read"


def objects(levels: int) -> dict:
    """{"a": {"a": … {}}}: `levels` objects, one inside the other."""
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def arrays(levels: int) -> list:
    """[[…[]]]: `levels` arrays, one inside the other."""
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def refusal(text: str) -> str:
    with pytest.raises(FormatError) as caught:
        parse_json_bytes(text.encode())
    return str(caught.value)


# --- reading one JSON text ---------------------------------------------------------------------------------


@pytest.mark.parametrize("nest", [objects, arrays], ids=["objects", "arrays"])
def test_nesting_up_to_the_limit_is_read_and_one_level_more_is_refused_naming_where(nest):
    assert parse_json_bytes(json.dumps(nest(MAX_JSON_DEPTH)).encode()) == nest(MAX_JSON_DEPTH)
    shown = ".a" if nest is objects else "[0]"
    # The first container below the limit is named: its path, cut in the middle.
    error = refusal(json.dumps({"extra": nest(MAX_JSON_DEPTH)}))
    assert error == f"extra{shown * 5}.…{shown}: {DEPTH_LIMIT_TEXT}"
    assert too_deep({"extra": nest(MAX_JSON_DEPTH - 1)}) is False
    assert too_deep({"extra": nest(MAX_JSON_DEPTH)}) is True


def test_nesting_counts_objects_and_arrays_alike_and_only_containers():
    mixed: object = "a leaf is no level"
    for i in range(MAX_JSON_DEPTH):
        mixed = {"k": mixed} if i % 2 else [1, mixed]
    assert too_deep(mixed) is False
    assert too_deep([mixed]) is True
    assert too_deep(5) is False and too_deep("[[[[") is False


def test_nesting_too_deep_for_the_parser_itself_is_one_line():
    assert refusal("[" * 100_000 + "]" * 100_000) == f"JSON: {DEPTH_LIMIT_TEXT}"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"reward": 0.0, "reward": 1.0}', f'root: key "reward" {TWICE}'),
        (
            '{"verifier_result": {"rewards": {"reward": 0.0, "x": 2, "reward": 1.0}}}',
            f'verifier_result.rewards: key "reward" {TWICE}',
        ),
        ('[{}, {"a b": [1, {"k": 1, "k": 1}]}]', f'[1]["a b"][1]: key "k" {TWICE}'),
        # The same value twice is still refused: a file that repeats itself is not what its tool wrote.
        ('{"steps": [{"step_id": 1, "step_id": 1}]}', f'steps[0]: key "step_id" {TWICE}'),
        ('{"": 1, "": 2}', f'root: key "" {TWICE}'),
    ],
)
def test_a_key_named_twice_in_one_object_is_refused_naming_the_key_and_where(text, error):
    assert refusal(text) == error


def test_the_same_key_in_different_objects_is_no_repeat():
    text = '{"a": {"reward": 1}, "b": {"reward": 0}, "reward": 0.5}'
    assert parse_json_bytes(text.encode()) == json.loads(text)


def test_hostile_keys_in_a_path_are_quoted_and_cut():
    key = 'x"\n' + "y" * 100
    shown = json_path(("extra", key, 3))
    assert shown == "extra[" + json.dumps('x"\n' + "y" * 37 + "…", ensure_ascii=False) + "][3]"
    assert len(refusal(json.dumps({key: 1})[:-1] + ", " + json.dumps(key) + ": 2}")) < 200


# --- what ingest stores --------------------------------------------------------------------------------------


def _harbor_trial(directory: Path, result: dict, trajectory: dict | None = None) -> Path:
    write_json(directory / "result.json", {"task_name": "t", "trial_name": directory.name, **result})
    if trajectory is not None:
        write_json(directory / "agent" / "trajectory.json", trajectory)
    return directory


def test_a_too_deep_file_is_refused_whole_and_the_others_stored(store, tmp_path):
    corpus = tmp_path / "corpus"
    write_json(corpus / "ok.json", atif("ok"))
    at_limit = atif("at-limit")  # root, extra, deep: 2 levels above the chain
    at_limit["extra"]["deep"] = objects(MAX_JSON_DEPTH - 2)
    write_json(corpus / "at-limit.json", at_limit)
    deep_root = atif("deep-root")
    deep_root["extra"]["deep"] = objects(MAX_JSON_DEPTH - 1)
    write_json(corpus / "deep-root.json", deep_root)
    deep_step = atif("deep-step")  # root, steps, step, extra, d
    deep_step["steps"][1]["extra"] = {"d": arrays(MAX_JSON_DEPTH - 3)}
    write_json(corpus / "deep-step.json", deep_step)
    deep_args = atif("deep-args")  # a JSON string's nesting counts on its own
    deep_args["steps"][1]["tool_calls"] = [
        {"tool_call_id": "c", "function_name": "f", "arguments": json.dumps({"x": arrays(MAX_JSON_DEPTH)})}
    ]
    write_json(corpus / "deep-args.json", deep_args)
    _harbor_trial(
        corpus / "deep-result", {"agent_result": {"n_input_tokens": 1, "x": objects(MAX_JSON_DEPTH)}}
    )
    (corpus / "deep-result" / "agent").mkdir()
    deep_trajectory = atif("deep-in-trial")
    deep_trajectory["extra"]["deep"] = objects(MAX_JSON_DEPTH)
    _harbor_trial(corpus / "deep-trajectory", {}, deep_trajectory)

    report = ingest_paths(store, [corpus])
    assert errors_by_name(report.errors) == {
        "deep-root.json": f"extra.deep.a.a.a.a.….a: {DEPTH_LIMIT_TEXT}",
        "deep-step.json": f"steps[1].extra.d[0][0].…[0]: {DEPTH_LIMIT_TEXT}",
        "deep-args.json": f"steps[1].tool_calls[0].arguments: x[0][0][0][0][0].…[0]: {DEPTH_LIMIT_TEXT}",
        "deep-result": f"result.json: agent_result.x.a.a.a.a.….a: {DEPTH_LIMIT_TEXT}",
        "deep-trajectory": f"agent/trajectory.json: extra.deep.a.a.a.a.….a: {DEPTH_LIMIT_TEXT}",
    }
    assert report.trajectories_added == 2
    for refused in ("deep-root", "deep-step", "deep-args", "deep-result", "deep-in-trial"):
        assert store.get_trajectory(refused) is None
    stored = store.get_trajectory("at-limit")
    assert stored is not None and stored.extra["deep"] == objects(MAX_JSON_DEPTH - 2)


def test_a_repeated_key_in_a_reward_result_or_trajectory_refuses_the_file(store, tmp_path):
    corpus = tmp_path / "corpus"
    good = _harbor_trial(corpus / "good", {"verifier_result": {"rewards": {"reward": 1.0}}})
    (good / "agent").mkdir()
    # No agent/ folder: the trial is found by its result.json, which a strict read would refuse.
    result = corpus / "result-twice"
    result.mkdir(parents=True)
    (result / "result.json").write_text(
        '{"task_name": "t", "trial_name": "result-twice", '
        '"verifier_result": {"rewards": {"reward": 0.0, "reward": 1.0}}}'
    )
    reward = _harbor_trial(corpus / "reward-twice", {})
    (reward / "agent").mkdir()
    (reward / "verifier").mkdir()
    (reward / "verifier" / "reward.json").write_text('{"reward": 0.0, "reward": 1.0}')
    in_rsr = json.dumps(atif("rsr-twice", reward=0.0)).replace(
        '"reward": 0.0', '"reward": 0.0, "reward": 1.0'
    )
    (corpus / "rsr-twice.json").write_text(in_rsr)
    in_trial = _harbor_trial(corpus / "trajectory-twice", {})
    (in_trial / "agent").mkdir()
    (in_trial / "agent" / "trajectory.json").write_text(in_rsr)
    args = atif("args-twice")
    args["steps"][1]["tool_calls"] = [
        {
            "tool_call_id": "c",
            "function_name": "bash",
            "arguments": '{"command": "ls", "command": "rm -rf /"}',
        }
    ]
    write_json(corpus / "args-twice.json", args)
    tb1 = corpus / "tb1-twice"
    tb1.mkdir()
    (tb1 / "results.json").write_text(
        '{"task_id": "t", "trial_name": "tb1-twice", "is_resolved": false, "is_resolved": true}'
    )
    (tb1 / "agent-logs").mkdir()

    report = ingest_paths(store, [corpus])
    assert errors_by_name(report.errors) == {
        "result-twice": f'result.json: verifier_result.rewards: key "reward" {TWICE}',
        "reward-twice": f'verifier/reward.json: root: key "reward" {TWICE}',
        "rsr-twice.json": f'extra.rsr: key "reward" {TWICE}',
        "trajectory-twice": f'agent/trajectory.json: extra.rsr: key "reward" {TWICE}',
        "args-twice.json": f'steps[1].tool_calls[0].arguments: root: key "command" {TWICE}',
        "tb1-twice": f'results.json: root: key "is_resolved" {TWICE}',
    }
    assert report.trajectories_added == 1
    assert [t["trajectory_id"] for t in store.list_trajectories()] == ["good"]


def test_numeric_timestamps_are_stored_as_iso_8601_utc(store, tmp_path):
    corpus = tmp_path / "corpus"
    doc = atif("numbers")
    doc["steps"][0]["timestamp"] = 1_700_000_000
    doc["steps"][1]["timestamp"] = 1_700_000_061.5
    write_json(corpus / "numbers.json", doc)
    _harbor_trial(
        corpus / "harbor",
        {"started_at": 1_700_000_000, "finished_at": "2023-11-14T22:15:00Z"},
        atif("harbor"),
    )
    tb1 = corpus / "tb1"
    write_json(
        tb1 / "results.json",
        {"task_id": "t", "trial_name": "tb1", "trial_started_at": 0, "trial_ended_at": 86_400.25},
    )
    (tb1 / "agent-logs").mkdir()

    report = ingest_paths(store, [corpus])
    assert report.errors == [] and report.trajectories_added == 3
    steps = store.get_trajectory("numbers").steps  # type: ignore[union-attr]
    assert [s.timestamp for s in steps] == ["2023-11-14T22:13:20+00:00", "2023-11-14T22:14:21.500000+00:00"]
    assert duration_s(steps[0].timestamp, steps[1].timestamp) == 61.5
    harbor = store.get_trajectory("harbor")
    assert harbor is not None and harbor.started_at == "2023-11-14T22:13:20+00:00"
    assert duration_s(harbor.started_at, harbor.finished_at) == 100.0
    tb = store.get_trajectory("tb1")
    assert tb is not None and (tb.started_at, tb.finished_at) == (
        "1970-01-01T00:00:00+00:00",
        "1970-01-02T00:00:00.250000+00:00",
    )


@pytest.mark.parametrize(
    "value", [1_700_000_000_000, -1, True, float("inf"), {"seconds": 1}, [2023, 11, 14]], ids=repr
)
def test_a_timestamp_that_is_no_time_refuses_the_file_naming_the_field(store, tmp_path, value):
    corpus = tmp_path / "corpus"
    doc = atif("bad-time")
    doc["steps"][1]["timestamp"] = value
    write_json(corpus / "bad-time.json", doc)
    _harbor_trial(corpus / "harbor", {"finished_at": value}, atif("harbor"))
    tb1 = corpus / "tb1"
    write_json(tb1 / "results.json", {"task_id": "t", "trial_name": "tb1", "agent_started_at": value})
    (tb1 / "agent-logs").mkdir()
    write_json(corpus / "ok.json", atif("ok"))

    report = ingest_paths(store, [corpus])
    shown = json.dumps(value)
    assert errors_by_name(report.errors) == {
        "bad-time.json": f"steps[1].timestamp: expected {TIME}, got {shown}",
        "harbor": f"result.json finished_at: expected {TIME}, got {shown}",
        "tb1": f"results.json agent_started_at: expected {TIME}, got {shown}",
    }
    assert [t["trajectory_id"] for t in store.list_trajectories()] == ["ok"]


def test_a_timestamp_string_is_kept_as_written_and_read_as_no_time(store, tmp_path):
    doc = atif("words")
    doc["steps"][0]["timestamp"] = "yesterday"
    doc["steps"][1]["timestamp"] = "2025-01-01T10:00:00Z"
    write_json(tmp_path / "words.json", doc)
    assert ingest_paths(store, [tmp_path]).errors == []
    steps = store.get_trajectory("words").steps  # type: ignore[union-attr]
    assert [s.timestamp for s in steps] == ["yesterday", "2025-01-01T10:00:00Z"]
    assert parse_time(steps[0].timestamp) is None and parse_time(steps[1].timestamp) is not None


# --- Terminal-Bench 1 episodes -------------------------------------------------------------------------------


def _tb1_copy(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(TB1_RUN, run)
    return run / "hello-world" / TB1_TRIAL / "agent-logs"


def test_an_episode_without_a_response_file_is_marked_not_recorded(store, tmp_path):
    logs = _tb1_copy(tmp_path)
    (logs / "episode-1" / "response.txt").unlink()
    (logs / "episode-2" / "response.txt").write_text("")  # written, and empty: the model's (bad) answer
    report = ingest_paths(store, [tmp_path / "run"])
    assert report.errors == [] and report.trajectories_added == 1
    steps = store.get_trajectory(TB1_TRIAL).steps  # type: ignore[union-attr]
    assert [s.source for s in steps] == ["user", "agent", "agent", "agent"]
    missing = steps[2]
    assert missing.extra == {
        MISSING_RESPONSE: True,
        "note": "agent-logs/episode-1/response.txt is missing: no response was recorded",
    }
    assert (missing.message, missing.analysis, missing.commands, missing.task_complete) == (
        "",
        None,
        [],
        False,
    )
    assert missing.observation == (logs / "episode-2" / "prompt.txt").read_text()
    assert steps[1].extra == {} and steps[1].analysis is not None
    assert steps[3].extra == {} and steps[3].message == ""


def test_a_trial_whose_episodes_all_have_responses_has_no_mark(store, data_dir):
    ingest_paths(store, [data_dir / "tb1_runs"])
    steps = store.get_trajectory(TB1_TRIAL).steps  # type: ignore[union-attr]
    assert all(MISSING_RESPONSE not in s.extra for s in steps)


# --- the command line ----------------------------------------------------------------------------------------


def test_rsr_ingest_refuses_deep_and_repeated_values_and_what_it_stored_shows(tmp_path):
    corpus = tmp_path / "corpus"
    deep = atif("deep")
    deep["extra"]["deep"] = objects(500)  # the depth that made `rsr show --json` fail
    write_json(corpus / "deep.json", deep)
    (corpus / "twice.json").write_text(json.dumps(atif("twice"))[:-1] + ', "session_id": "other"}')
    at_limit = atif("at-limit")
    at_limit["extra"]["deep"] = objects(MAX_JSON_DEPTH - 2)
    at_limit["steps"][1]["extra"] = {"d": arrays(MAX_JSON_DEPTH - 4)}
    at_limit["steps"][0]["timestamp"] = 1_700_000_000
    write_json(corpus / "at-limit.json", at_limit)
    db = str(tmp_path / "x.duckdb")

    status, report, stderr = rsr("ingest", str(corpus), "--db", db)
    assert status == 1 and "Traceback" not in stderr, stderr
    assert report is not None and errors_by_name(report["errors"]) == {
        "deep.json": f"extra.deep.a.a.a.a.….a: {DEPTH_LIMIT_TEXT}",
        "twice.json": f'root: key "session_id" {TWICE}',
    }
    status, shown, stderr = rsr("show", "at-limit", "--db", db)
    assert status == 0 and "Traceback" not in stderr, stderr
    assert shown is not None and shown["steps"][0]["timestamp"] == "2023-11-14T22:13:20+00:00"
    assert not too_deep(shown["extra"]["deep"], MAX_JSON_DEPTH - 2)
    assert too_deep(shown["extra"]["deep"], MAX_JSON_DEPTH - 3)
