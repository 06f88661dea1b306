"""Bad input: one clear error per file, nothing of it stored, the rest stored."""

from __future__ import annotations

import json
import shutil

from rsr_core.ingest.runner import ingest_paths


def _valid(session: str, n_steps: int = 2) -> dict:
    steps = [
        {"step_id": i + 1, "source": "user" if i == 0 else "agent", "message": f"m{i}"}
        for i in range(n_steps)
    ]
    return {
        "schema_version": "ATIF-v1.4",
        "session_id": session,
        "agent": {"name": "terminus-2", "version": "1"},
        "steps": steps,
        "extra": {"rsr": {"task_id": "t"}},
    }


def _errors(report) -> dict[str, str]:
    return {e.path.rsplit("/", 1)[-1]: e.error for e in report.errors}


def test_each_bad_file_reported_and_nothing_of_it_stored(store, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    good = json.dumps(_valid("good-1"))
    (bad / "good.json").write_text(good)
    (bad / "truncated.json").write_text(good[: len(good) // 2])
    (bad / "shape.json").write_text(json.dumps([1, 2, 3]))
    (bad / "version.json").write_text(json.dumps({**_valid("v"), "schema_version": "ATIF-v2.0"}))
    (bad / "binary.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (bad / "latin1.json").write_bytes(json.dumps(_valid("café"), ensure_ascii=False).encode("latin-1"))
    out_of_order = _valid("ooo", 3)
    out_of_order["steps"][1]["step_id"], out_of_order["steps"][2]["step_id"] = 3, 2
    (bad / "order.json").write_text(json.dumps(out_of_order))
    wrong_field = _valid("wf")
    wrong_field["steps"][1]["tool_calls"] = [{"tool_call_id": "x", "function_name": 7, "arguments": {}}]
    (bad / "field.json").write_text(json.dumps(wrong_field))
    (bad / "empty").mkdir()

    report = ingest_paths(store, [bad])
    errors = _errors(report)
    assert set(errors) == {
        "truncated.json",
        "shape.json",
        "version.json",
        "binary.json",
        "latin1.json",
        "order.json",
        "field.json",
        "empty",
    }
    assert "line 1 column" in errors["truncated.json"] and "truncated" in errors["truncated.json"]
    assert "got list" in errors["shape.json"]
    assert "ATIF-v2.0" in errors["version.json"] and "ATIF-v1.0" in errors["version.json"]
    assert "binary data" in errors["binary.json"] and "NUL byte" in errors["binary.json"]
    assert "not UTF-8" in errors["latin1.json"] and "0xe9" in errors["latin1.json"]
    assert "steps[1].step_id" in errors["order.json"] and "expected 2" in errors["order.json"]
    assert "steps[1].tool_calls[0].function_name" in errors["field.json"]
    assert "empty directory" in errors["empty"]
    assert report.trajectories_added == 1
    assert store.summary()["trajectories"]["discovery"] == 1
    assert store.summary()["steps"] == 2  # only the good file's steps


def test_bad_trial_stores_nothing_of_the_trial(store, data_dir, tmp_path):
    job = tmp_path / "job"
    shutil.copytree(data_dir / "harbor_job", job)
    trial = next(job.rglob("csv-report__aaa"))
    traj = trial / "agent" / "trajectory.json"
    doc = json.loads(traj.read_text())
    doc["steps"][2]["source"] = "robot"
    traj.write_text(json.dumps(doc))
    report = ingest_paths(store, [job])
    assert len(report.errors) == 1
    assert "agent/trajectory.json: steps[2].source" in report.errors[0].error
    assert report.errors[0].path.endswith("csv-report__aaa")
    assert store.get_trajectory("h-s1") is None
    assert report.trajectories_added == 3


def test_fifty_megabyte_observation_is_stored_whole(store, tmp_path):
    doc = _valid("big", 2)
    big = "x" * (50 * 1024 * 1024)
    doc["steps"][1]["observation"] = {"results": [{"source_call_id": "c", "content": big}]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    report = ingest_paths(store, [path])
    assert report.errors == [] and report.trajectories_added == 1
    assert len(store.get_trajectory("big").steps[1].observation) == len(big)


def test_missing_path_and_empty_dir(store, tmp_path):
    (tmp_path / "nothing").mkdir()
    report = ingest_paths(store, [tmp_path / "nothing", tmp_path / "missing.json"])
    errors = _errors(report)
    assert "empty directory" in errors["nothing"] and "no such file" in errors["missing.json"]


def test_same_id_other_content_is_kept_apart(store, tmp_path):
    a, b = _valid("same"), _valid("same", 3)
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    first = ingest_paths(store, [tmp_path])
    assert first.trajectories_added == 2
    again = ingest_paths(store, [tmp_path])
    assert again.trajectories_added == 0 and again.duplicates == 2
