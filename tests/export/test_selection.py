"""The exported row set is exactly what should train, for every combination of verdicts and reviews."""

from __future__ import annotations

import itertools
import json

import pytest

from rsr_core.export import ExportFilters, export, preview
from rsr_core.store import Store
from rsr_core.store.pipeline import rewrite_status
from tests.export.corpus import add_rewrite, add_task, trajectory

REWARDS = (1.0, 0.0, None)
TRANSFERS = (None, False, True)  # None: never checked
REVIEWS = (
    (),
    ("approve",),
    ("reject",),
    ("reject", "approve"),
    ("approve", "reject"),
    ("approve", "approve"),
)
HARNESSES = ("terminus-2", "statem", "rsrt")


def _should_train_rewrite(reward, transfer, reviews) -> bool:
    return (reward or 0) >= 1.0 and transfer is not True and (not reviews or reviews[-1] != "reject")


@pytest.fixture(scope="module")
def corpus():
    """Every combination of rewrite verdicts and reviews, discovery runs of three harnesses, evals."""
    store = Store(":memory:")
    add_task(store, "sales-report", "data-processing")
    add_task(store, "log-parse", "text")
    expected, reasons = set(), {}
    for i, (reward, transfer, reviews) in enumerate(itertools.product(REWARDS, TRANSFERS, REVIEWS)):
        tid = f"rw-{i:02d}"
        add_rewrite(store, tid, reward, transfer, list(reviews), variant=tid)
        if _should_train_rewrite(reward, transfer, reviews):
            expected.add(tid)
        else:
            reasons[tid] = (
                "not_verified" if (reward or 0) < 1.0 else "answer_transfer" if transfer else "human_rejected"
            )
    # Two rewrites of one runbook that a later review rejects: both leave.
    add_rewrite(store, "shared-a", 1.0, None, ["approve"], runbook_id="rb-shared", variant="a")
    add_rewrite(store, "shared-b", 1.0, False, ["reject"], runbook_id="rb-shared", variant="b")
    reasons.update({"shared-a": "human_rejected", "shared-b": "human_rejected"})
    discovery = []
    for harness, reward in itertools.product(HARNESSES, REWARDS):
        tid = f"disc-{harness}-{reward}"
        discovery.append(trajectory(tid, "log-parse", "discovery", harness, reward, variant=tid))
        if harness == "terminus-2" and reward == 1.0:
            expected.add(tid)
        else:
            reasons[tid] = "harness" if harness != "terminus-2" else "not_verified"
    discovery.append(trajectory("ev-1", "log-parse", "eval", "terminus-2", 1.0, variant="ev"))
    store.write_trajectories(discovery)
    yield store, expected, reasons
    store.close()


def _exported_ids(store, tmp_path, filters=None, fmt="sft-jsonl"):
    out = tmp_path / f"out-{fmt}.jsonl"
    summary = export(store, fmt, out, filters, force=True)
    return {json.loads(line)["trajectory_id"] for line in out.read_text().splitlines()}, summary


def test_exported_rows_are_exactly_those_that_should_train(corpus, tmp_path):
    store, expected, reasons = corpus
    ids, summary = _exported_ids(store, tmp_path)
    assert ids == expected
    kept = {r["trajectory_id"] for r in rewrite_status(store.cursor()) if r["kept"]}
    assert {i for i in ids if i.startswith(("rw-", "shared-"))} == kept  # the pipeline's "kept", reused
    assert summary.exported == len(expected) and summary.duplicates == 0
    counted = {k: v for k, v in summary.left_out.model_dump().items() if v}
    wanted = {}
    for reason in reasons.values():
        wanted[reason] = wanted.get(reason, 0) + 1
    assert counted == wanted
    assert summary.selected == len(expected) + len(reasons)  # evals are not selected by default


def test_preview_matches_the_export(corpus, tmp_path):
    store, expected, reasons = corpus
    p = preview(store)
    assert p.eligible == p.exported == len(expected) and p.left_out.total == len(reasons)
    assert p.eligible_by_kind == {"rewrite": len(expected) - 1, "discovery": 1}


def test_without_direct_terminus_only_kept_rewrites(corpus, tmp_path):
    store, expected, _ = corpus
    ids, summary = _exported_ids(store, tmp_path, ExportFilters(include_direct_terminus=False))
    assert ids == {i for i in expected if not i.startswith("disc-")}
    assert summary.left_out.direct_terminus == 3  # terminus-2 discovery runs, whatever their reward
    assert summary.left_out.harness == 6


def test_kind_and_task_selection(corpus, tmp_path):
    store, _expected, _ = corpus
    ids, summary = _exported_ids(store, tmp_path, ExportFilters(kinds=["discovery"]))
    assert ids == {"disc-terminus-2-1.0"} and summary.selected == 9
    ids, _ = _exported_ids(store, tmp_path, ExportFilters(task_ids=["log-parse"]))
    assert ids == {"disc-terminus-2-1.0"}
    ids, summary = _exported_ids(store, tmp_path, ExportFilters(kinds=["eval"]))
    assert ids == set() and summary.left_out.eval == 1


def test_all_turns_the_training_filters_off(corpus, tmp_path):
    store, expected, reasons = corpus
    ids, summary = _exported_ids(store, tmp_path, ExportFilters(kinds=["rewrite", "discovery", "eval"], all_trajectories=True))  # fmt: skip
    assert ids == expected | set(reasons) | {"ev-1"}
    assert summary.left_out.total == 0
