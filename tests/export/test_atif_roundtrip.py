"""`rsr export --format atif --all` -> `rsr ingest` into an empty database gives back what was stored."""

from __future__ import annotations

import json

from rsr_core.export import ExportFilters, export
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store
from rsr_core.store.pipeline import reviews_of, rewrite_status, transfer_of
from tests.export.corpus import add_rewrite, trajectory

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
    store.write_trajectories(_odd() + [trajectory("disc-1", kind="discovery", harness="rsrt", reward=1.0)])
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
    assert source.count_trajectories() == 14 and summary.duplicates == 0
    assert (
        summary.exported == 12 and summary.left_out.no_steps == 2
    )  # `empty` and a trial without agent steps
    report = ingest_paths(copy, [tmp_path / "archive"])
    assert report.errors == [] and report.trajectories_added == 12
    before, after = _dump(source), _dump(copy)
    assert len(before) == 12 and before.keys() == after.keys()
    for tid in before:
        assert after[tid] == before[tid], tid
    for cur_a, cur_b in ((source.cursor(), copy.cursor()),):
        assert sorted(map(str, rewrite_status(cur_a))) == sorted(map(str, rewrite_status(cur_b)))
        for rid in ("rb-rw-1", "rb-x"):
            assert reviews_of(cur_a, rid) == reviews_of(cur_b, rid)
        assert transfer_of(cur_a, "rw-1") == transfer_of(cur_b, "rw-1")
        assert transfer_of(cur_b, "rw-2") is None
    again = ingest_paths(copy, [tmp_path / "archive"])
    assert again.trajectories_added == 0 and again.duplicates == 12
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
    control = [s for s in doc["steps"] if (s.get("extra") or {}).get("harness_control")]
    assert len(guidance) == 1 and len(control) == 1
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
    assert "exported 12 of 14 selected" in capsys.readouterr().out  # the eval run included, not the stepless
    assert main(["ingest", str(archive), "--db", copy, "--json"]) == 0
    assert _dump(Store(copy)) == before
