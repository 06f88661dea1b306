"""`rsr export --format atif --all` -> `rsr ingest` into an empty database gives back what was stored."""

from __future__ import annotations

import json

from rsr_core.export import ExportFilters, export
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store
from rsr_core.store.pipeline import reviews_of, rewrite_status, transfer_of
from tests.export.corpus import CONFIRM, add_rewrite, trajectory

ALL = ExportFilters(kinds=["rewrite", "discovery", "eval"], all_trajectories=True)


def _odd() -> list[Trajectory]:
    """Trajectories whose stored fields ATIF cannot carry as such, or that reading would derive differently."""
    steps = [
        Step(index=1, source="user", message="Résumé the täsk ✓", timestamp="2025-01-01T00:00:00Z"),
        Step(
            index=2,
            source="agent",
            message="Analysis: one\nPlan: two",
            analysis="stored analysis",
            plan=None,
            reasoning="thinking…",
            commands=[Command(keystrokes="ls\n", duration=3.5, function_name="execute")],
            observation="",
            prompt_tokens=10,
            completion_tokens=5,
            cost_usd=0.25,
            model_name="model-y",
            extra={"cached_tokens": 4, "_atif": {"vendor_field": [1, 2]}, "note": "kept"},
        ),
        Step(index=5, source="user", message="Verifier: not passed", harness_control=False),
        Step(index=6, source="user", message="plain words", harness_control=True, task_complete=True),
        Step(
            index=7,
            source="agent",
            message='{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "pwd\\n"}], "task_complete": true}',
            analysis=None,
            plan=None,
        ),
    ]
    odd = Trajectory(
        trajectory_id="odd/1 with spaces",
        session_id=None,
        task_id=None,
        kind="eval",
        harness="statem",
        agent_name=None,
        agent_version="2.1",
        model=None,
        reward=None,
        job_id="job-9",
        instruction=None,
        started_at="2025-01-01T00:00:00Z",
        finished_at=None,
        exception='{"type": "AgentTimeoutError"}',
        verifier_output="1 failed\n",
        scripted=True,
        content_hash="x",
        steps=steps,
        extra={
            "notes": "n",
            "final_metrics": {"total_cost_usd": 1.5},
            "agent_extra": {"temperature": 0.7},
            "schema_version": "ATIF-v1.2",
            "trial_name": "odd__abc",
        },
    )
    empty = Trajectory(trajectory_id="empty", task_id="t", reward=0.0, content_hash="e", steps=[])
    return [odd, empty]


def _build(store: Store, data_dir) -> None:
    ingest_paths(store, [data_dir])
    store.write_trajectories([*_odd(), trajectory("disc-1", kind="discovery", harness="rsrt", reward=1.0)])
    add_rewrite(store, "rw-1", 1.0, True, ["approve", "reject"], variant="1")
    add_rewrite(store, "rw-2", 1.0, None, ["reject", "approve"], runbook_id="rb-x", variant="2")
    add_rewrite(store, "rw-3", 0.0, False, [], runbook_id="rb-x", variant="3")


def _dump(store: Store) -> dict[str, dict]:
    ids = [r["trajectory_id"] for r in store.list_trajectories(limit=10_000)]
    dumps = {i: store.get_trajectory(i).model_dump(exclude={"origin", "content_hash"}) for i in ids}
    # ATIF needs an agent step: runs without one are left out of every export (reason no_steps)
    return {i: d for i, d in dumps.items() if any(s["source"] == "agent" for s in d["steps"])}


def test_all_export_then_ingest_is_lossless(tmp_path, data_dir):
    source, copy = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    _build(source, data_dir)
    summary = export(source, "atif", tmp_path / "archive", ALL)
    assert source.count_trajectories() == 23 and summary.duplicates == 0
    # left out: `empty`, a trial without agent steps, and the oracle trials of harbor (3) and Terminal-Bench (3)
    assert summary.exported == 15 and summary.left_out.no_steps == 8
    report = ingest_paths(copy, [tmp_path / "archive"])
    assert report.errors == [] and report.trajectories_added == 15
    before, after = _dump(source), _dump(copy)
    assert len(before) == 15 and before.keys() == after.keys()
    for tid in before:
        assert after[tid] == before[tid], tid
    for cur_a, cur_b in ((source.cursor(), copy.cursor()),):
        assert sorted(map(str, rewrite_status(cur_a))) == sorted(map(str, rewrite_status(cur_b)))
        for rid in ("rb-rw-1", "rb-x"):
            assert reviews_of(cur_a, rid) == reviews_of(cur_b, rid)
        assert transfer_of(cur_a, "rw-1") == transfer_of(cur_b, "rw-1")
        assert transfer_of(cur_b, "rw-2") is None
    again = ingest_paths(copy, [tmp_path / "archive"])
    assert again.trajectories_added == 0 and again.duplicates == 15
    assert len(reviews_of(copy.cursor(), "rb-x")) == 2


def test_archive_files_carry_the_provenance_convention(tmp_path):
    store = Store(":memory:")
    add_rewrite(store, "rw-1", 1.0, False, ["approve"], variant="1")
    export(store, "atif", tmp_path / "arch", ALL)
    doc = json.loads((tmp_path / "arch" / "sales-report" / "rw-1.atif.json").read_text())
    assert doc["schema_version"] == "ATIF-v1.7"
    rsr = doc["extra"]["rsr"]
    assert {
        k: rsr[k] for k in ("task_id", "harness", "kind", "reward", "source_trajectory_id", "runbook_id")
    } == {
        "task_id": "sales-report",
        "harness": "terminus-2",
        "kind": "rewrite",
        "reward": 1.0,
        "source_trajectory_id": "disc-src",
        "runbook_id": "rb-rw-1",
    }
    assert rsr["transfer_check"]["answer_transfer"] is False and rsr["reviews"][0]["decision"] == "approve"
    guidance = [s for s in doc["steps"] if (s.get("extra") or {}).get("rsr_private_guidance")]
    # the "are you sure?" question is written inside the observation of the claim, as harbor's Terminus 2 does
    claim = doc["steps"][4]
    assert claim["extra"]["rsr_harness_steps"] == [{"message": CONFIRM}]
    assert claim["observation"]["results"][0]["content"] == "root@box:/app# \n\n" + CONFIRM
    assert len(guidance) == 1 and not any((s.get("extra") or {}).get("harness_control") for s in doc["steps"])
    calls = doc["steps"][3]["tool_calls"]
    assert calls[0]["function_name"] == "bash_command" and calls[0]["arguments"] == {
        "keystrokes": "ls -la\n",
        "duration": 0.1,
    }


def test_training_view_atif_has_only_training_steps(tmp_path):
    store = Store(":memory:")
    add_rewrite(store, "rw-1", 1.0, None, [], variant="1")
    export(store, "atif", tmp_path / "train")
    doc = json.loads((tmp_path / "train" / "sales-report" / "rw-1.atif.json").read_text())
    assert [s["step_id"] for s in doc["steps"]] == [1, 2, 3, 4, 5]
    assert not any((s.get("extra") or {}).get("rsr_private_guidance") for s in doc["steps"])
    assert not any((s.get("extra") or {}).get("harness_control") for s in doc["steps"])
    assert doc["extra"]["rsr"]["training_view"] == {"steps_removed": 2}
    assert "reviews" not in doc["extra"]["rsr"] and "transfer_check" not in doc["extra"]["rsr"]
    copy = Store(":memory:")
    assert ingest_paths(copy, [tmp_path / "train"]).errors == []
    assert [s.index for s in copy.get_trajectory("rw-1").steps] == [1, 2, 3, 4, 5]


def test_cli_all_archives_every_kind_by_default(tmp_path, data_dir, capsys):
    from rsr_core.cli import main

    source = Store(tmp_path / "src.duckdb")
    _build(source, data_dir)
    before = _dump(source)
    source.close()
    archive, copy = tmp_path / "arch", str(tmp_path / "copy.duckdb")
    assert (
        main(
            [
                "export",
                "--format",
                "atif",
                "--all",
                "--out",
                str(archive),
                "--db",
                str(tmp_path / "src.duckdb"),
            ]
        )
        == 0
    )
    assert "exported 15 of 23 selected" in capsys.readouterr().out  # the eval run included, not the stepless
    assert main(["ingest", str(archive), "--db", copy, "--json"]) == 0
    assert _dump(Store(copy)) == before


def _roundtrip(tmp_path, doc: dict) -> tuple[dict, Trajectory, Trajectory]:
    """Ingest one ATIF document, export everything (`--all`), ingest the export: (exported document, first
    stored trajectory, re-ingested trajectory)."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "trajectory.json").write_text(json.dumps(doc))
    first, second = Store(":memory:"), Store(":memory:")
    assert ingest_paths(first, [tmp_path / "in"]).errors == []
    (tid,) = [r["trajectory_id"] for r in first.list_trajectories()]
    export(first, "atif", tmp_path / "out", ALL)
    (path,) = (tmp_path / "out").rglob("*.atif.json")
    assert ingest_paths(second, [tmp_path / "out"]).errors == []
    return json.loads(path.read_text()), first.get_trajectory(tid), second.get_trajectory(tid)


def test_v18_structures_survive_ingest_and_archive_export(tmp_path):
    from tests.ingest.rich_atif import rich_atif

    source = rich_atif()
    doc, stored, again = _roundtrip(tmp_path, source)
    assert stored.trajectory_id.startswith("atif-") and stored.session_id is None  # no id in the file
    assert again.model_dump(exclude={"origin", "content_hash"}) == stored.model_dump(
        exclude={"origin", "content_hash"}
    )
    assert doc["schema_version"] == "ATIF-v1.8" and doc["trajectory_id"] == stored.trajectory_id
    for key in ("subagent_trajectories", "continued_trajectory_ref"):
        assert doc[key] == source[key]
    assert doc["agent"]["tool_definitions"] == source["agent"]["tool_definitions"]
    for ours, theirs in zip(doc["steps"], source["steps"], strict=True):
        for key in ("message", "tool_calls", "observation", "llm_call_count"):
            assert ours.get(key) == theirs.get(key), key
    # what the store derived from them is still there
    assert stored.steps[0].message == "Fix the page shown here.\n[image]"
    assert [c.keystrokes for c in stored.steps[1].commands] == ["ls /etc\n"]


def test_own_files_keep_nothing_twice(tmp_path):
    """A file RSR wrote has the tool calls and observations it would write: nothing is kept aside."""
    source = {
        "schema_version": "ATIF-v1.7",
        "trajectory_id": "t-1",
        "agent": {"name": "terminus-2", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "do"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "Analysis: a\nPlan: p",
                "tool_calls": [
                    {
                        "tool_call_id": "call_2_1",
                        "function_name": "bash_command",
                        "arguments": {"keystrokes": "ls\n", "duration": 1.0},
                    }
                ],
                "observation": {"results": [{"source_call_id": "call_2_1", "content": "x"}]},
            },
        ],
    }
    doc, stored, _ = _roundtrip(tmp_path, source)
    assert all("_atif" not in s.extra for s in stored.steps) and "_atif" not in stored.extra
    assert doc["steps"][1]["tool_calls"] == source["steps"][1]["tool_calls"]


def test_real_harbor_terminus2_trajectory_survives(tmp_path, data_dir):
    """harbor's own Terminus 2 output (ATIF-v1.8, a session_id, tool-call ids such as `call_0_1`)."""
    (path,) = (data_dir / "harbor_real" / "jobs" / "terminus-2-run").glob("*/agent/trajectory.json")
    source = json.loads(path.read_text())
    doc, stored, again = _roundtrip(tmp_path, source)
    assert stored.trajectory_id == stored.session_id == source["session_id"]
    assert again.model_dump(exclude={"origin", "content_hash"}) == stored.model_dump(
        exclude={"origin", "content_hash"}
    )
    assert doc["schema_version"] == source["schema_version"]
    assert [s.get("tool_calls") for s in doc["steps"]] == [s.get("tool_calls") for s in source["steps"]]
    assert [s.get("observation") for s in doc["steps"]] == [s.get("observation") for s in source["steps"]]
    assert [s["message"] for s in doc["steps"]] == [s["message"] for s in source["steps"]]


def test_version_before_1_7_still_needs_an_id(tmp_path):
    from rsr_core.formats.atif_read import parse_atif
    from rsr_core.formats.reading import FormatError

    doc = {"schema_version": "ATIF-v1.6", "agent": {"name": "a", "version": "1"}, "steps": []}
    try:
        parse_atif(doc)
    except FormatError as exc:
        assert "session_id" in str(exc)
    else:
        raise AssertionError("an ATIF-v1.6 file without session_id was accepted")
    doc["schema_version"] = "ATIF-v1.7"
    assert parse_atif(doc)[0].trajectory_id == parse_atif(json.loads(json.dumps(doc)))[0].trajectory_id
