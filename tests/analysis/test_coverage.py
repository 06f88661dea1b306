"""Coverage overlap and funnel frames agree with `rsr stats coverage` / the store's funnel."""

from __future__ import annotations

import pytest

from rsr_core.analysis import coverage
from rsr_core.store import Store, analysis_queries
from tests.analysis.corpus import run

# solved: terminus-2 {t1, t2}, statem {t2, t3}, rsrt {t2, t4}; t5 attempted by all, solved by none
SOLVED = {"terminus-2": ["t1", "t2"], "statem": ["t2", "t3"], "rsrt": ["t2", "t4"]}


@pytest.fixture
def store():
    s = Store(":memory:")
    runs = []
    for harness, tasks in SOLVED.items():
        for task in tasks:
            runs.append(run(f"{harness}-{task}-ok", task, ["ls"], kind="discovery", harness=harness))
            runs.append(
                run(f"{harness}-{task}-no", task, ["ls"], kind="discovery", harness=harness, reward=0)
            )
        runs.append(run(f"{harness}-t5", "t5", ["ls"], kind="discovery", harness=harness, reward=None))
    runs.append(run("rw", "t9", ["ls"], kind="rewrite", harness="terminus-2", runbook="rb"))  # not discovery
    s.write_trajectories(runs)
    yield s
    s.close()


def test_upset_partitions_the_union(store):
    cur = store.cursor()
    stats = analysis_queries.coverage(cur)
    upset = coverage.upset_frame(analysis_queries.discovery_outcomes(cur))
    assert upset["tasks"].sum() == stats["union_solved"] == 4
    sizes = dict(zip(upset["harnesses"], upset["tasks"], strict=True))
    assert sizes == {"rsrt + statem + terminus-2": 1, "rsrt": 1, "statem": 1, "terminus-2": 1}
    for name, figures in stats["harnesses"].items():
        assert sizes.get(name, 0) == figures["unique_solved"]


def test_harness_frame_reshapes_the_stats(store):
    cur = store.cursor()
    frame = coverage.harness_frame(analysis_queries.coverage(cur))
    assert frame.to_dict("records") == [
        {"harness": "rsrt", "attempted_tasks": 3, "solved_tasks": 2, "unique_solved": 1},
        {"harness": "statem", "attempted_tasks": 3, "solved_tasks": 2, "unique_solved": 1},
        {"harness": "terminus-2", "attempted_tasks": 3, "solved_tasks": 2, "unique_solved": 1},
    ]


def test_funnel_frame_and_expansion_ratio(store):
    funnel = analysis_queries.funnel(store.cursor())
    frame = coverage.funnel_frame(funnel)
    assert list(frame["stage"]) == [
        "sources", "runbooks", "critic_pending", "critic_rejected", "pending_review", "human_rejected", "approved",
        "executions", "verifier_tampered", "verifier_inconsistent", "verified", "answer_transfer", "kept",
    ]  # fmt: skip
    assert dict(zip(frame["stage"], frame["count"], strict=True))["kept"] == funnel["kept"] == 1
    assert coverage.expansion_ratio(funnel) == 1.0  # one kept rewrite from one source


def test_empty_store_gives_empty_frames():
    s = Store(":memory:")
    assert coverage.upset_frame(analysis_queries.discovery_outcomes(s.cursor())).empty
