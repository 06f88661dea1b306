"""Same- vs cross-runbook grouping through the real store and `rsr similarity --json`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rsr_core.analysis.pair_metrics import METRICS
from rsr_core.analysis.similarity import score_pairs, summarise, summarise_all, summary_frame
from rsr_core.cli import main
from rsr_core.ingest.runner import ingest_paths
from rsr_core.store import Store, analysis_queries
from tests.analysis.corpus import run

CORPUS = [
    # t1: A, B from rb1 (same), C from rb2; D failed and E is discovery: both left out
    run("A", "t1", ["ls\ncat a.txt\n", "ls", "python3 run.py"], runbook="rb1"),
    run("B", "t1", ["ls", "cat  a.txt   \nC-c", "python3 run.py --fast"], runbook="rb1"),
    run("C", "t1", ["pwd\nls\n"], runbook="rb2"),
    run("D", "t1", ["ls"], runbook="rb2", reward=0.0),
    run("E", "t1", ["ls"], kind="discovery"),
    # t2: F, G from rb3 (same); H has no runbook (never same); I from rb4
    run("F", "t2", ["make"], runbook="rb3"),
    run("G", "t2", ["make"], runbook="rb3"),
    run("H", "t2", ["make"], runbook=None),
    run("I", "t2", ["make", "make test"], runbook="rb4"),
    # t3 has one passed rewrite (no pairs); a rewrite without a task is ignored
    run("J", "t3", ["ls"], runbook="rb5"),
    run("K", None, ["ls"], runbook="rb1"),
]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "sim.duckdb"
    store = Store(path)
    store.write_trajectories(CORPUS)
    store.close()
    return str(path)


def _cli(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_exact_same_vs_cross_overall_and_per_task(db, capsys):
    out = _cli(capsys, "similarity", "--db", db, "--json")
    assert out["metric"] == "exact"
    same, cross = out["same_runbook"], out["cross_runbook"]
    # same: (A,B) 2/4, (F,G) 1; cross: (A,C) 1/4, (B,C) 1/4, (F,H) 1, (G,H) 1, (F,I) (G,I) (H,I) 1/2
    assert same["pairs"] == 2 and same["mean"] == pytest.approx(0.75, abs=1e-12)
    assert cross["pairs"] == 7 and cross["mean"] == pytest.approx(4 / 7, abs=1e-12)  # not (0.25 + 0.7) / 2
    assert same["ci"][0] <= same["mean"] <= same["ci"][1]
    assert out["by_task"] == [
        {"task_id": "t1", "same_pairs": 1, "same_mean": 0.5, "cross_pairs": 2, "cross_mean": 0.25},
        {
            "task_id": "t2",
            "same_pairs": 1,
            "same_mean": 1.0,
            "cross_pairs": 5,
            "cross_mean": pytest.approx(0.7),
        },
    ]
    assert _cli(capsys, "similarity", "--db", db, "--json") == out  # the bootstrap is seeded


def test_other_metrics_and_task_filter(db, capsys):
    out = _cli(capsys, "similarity", "--metric", "multiset", "--task", "t1", "--db", db, "--json")
    assert out["same_runbook"] == {"pairs": 1, "mean": pytest.approx(0.4), "ci": [pytest.approx(0.4)] * 2}
    assert out["cross_runbook"]["mean"] == pytest.approx((1 / 5 + 1 / 4) / 2)
    assert [t["task_id"] for t in out["by_task"]] == ["t1"]
    order = _cli(capsys, "similarity", "--metric", "order", "--task", "t1", "--db", db, "--json")
    assert order["same_runbook"]["mean"] == pytest.approx(4 / 7)
    trans = _cli(capsys, "similarity", "--metric", "transition", "--task", "t2", "--db", db, "--json")
    # t2 transitions: only I has one, (make, make): every pair with I scores 0, the rest have none -> 0
    assert trans["cross_runbook"]["mean"] == 0.0
    fuzzy = _cli(capsys, "similarity", "--metric", "fuzzy", "--task", "t2", "--db", db, "--json")
    # ratio("make", "make test") = 8/13; (F,I): (1 + (1 + 8/13)/2)/2
    assert fuzzy["same_runbook"]["mean"] == 1.0
    assert fuzzy["cross_runbook"]["mean"] == pytest.approx((2 * 1 + 3 * (1 + (1 + 8 / 13) / 2) / 2) / 5)


def test_no_pairs_gives_nulls(db, capsys):
    out = _cli(capsys, "similarity", "--task", "t3", "--db", db, "--json")
    assert out["same_runbook"] == {"pairs": 0, "mean": None, "ci": None}
    assert out["by_task"] == []


def test_commands_come_normalised_from_ingested_files(tmp_path):
    def atif(tid: str, runbook: str, keys: list[str]) -> dict:
        steps = [{"step_id": 1, "source": "user", "message": "go"}]
        for i, k in enumerate(keys, 2):
            call = {"tool_call_id": f"c{i}", "function_name": "bash_command",
                    "arguments": {"keystrokes": k, "duration": 1}}  # fmt: skip
            steps.append(
                {"step_id": i, "source": "agent", "message": "Analysis: a\nPlan: b", "tool_calls": [call]}
            )
        rsr = {"task_id": "org/t9", "harness": "terminus-2", "kind": "rewrite", "reward": 1.0,
               "source_trajectory_id": "s1", "runbook_id": runbook}  # fmt: skip
        return {"schema_version": "ATIF-v1.6", "session_id": tid, "agent": {"name": "terminus-2"},
                "steps": steps, "extra": {"rsr": rsr}}  # fmt: skip

    for tid, rb, keys in (("x1", "r", ["ls   -la\nC-c\n", "cat f"]), ("x2", "r", ["ls -la\n"])):
        (tmp_path / f"{tid}.json").write_text(json.dumps(atif(tid, rb, keys)))
    store = Store(":memory:")
    assert not ingest_paths(store, [tmp_path], workers=1).errors
    cur = store.cursor()
    pairs = score_pairs(analysis_queries.passed_rewrites(cur), analysis_queries.passed_rewrite_commands(cur))
    assert pairs[["task_id", "relation", "exact", "multiset"]].to_dict("records") == [
        {"task_id": "t9", "relation": "same", "exact": 0.5, "multiset": 0.5}
    ]
    table = summary_frame(pairs)
    assert set(table["metric"]) == {"exact", "multiset", "order", "fuzzy", "transition"}
    assert summarise(pairs, "exact")["same_runbook"]["pairs"] == 1


def test_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="unknown metric"):
        score_pairs(pd.DataFrame(), pd.DataFrame(), ["cosine"])


def test_cli_metric_names_match_the_kernels():
    from rsr_core.analysis.pair_metrics import METRICS
    from rsr_core.commands import analysis

    assert analysis.METRICS == METRICS


def _groupby_by_task(pairs: pd.DataFrame, metric: str) -> list[tuple]:
    """The per-task figures by their definition, pandas' groupby of the pairs by task: (task, same pairs, their
    mean, cross pairs, their mean)."""
    frame = pd.DataFrame(
        {"task_id": pairs["task_id"], "same": pairs["relation"] == "same", "v": pairs[metric]}
    )
    out = []
    for task_id, grp in frame.groupby("task_id", sort=True):
        sides = [grp["v"][grp["same"]], grp["v"][~grp["same"]]]
        out.append((task_id, *[x for v in sides for x in (len(v), float(v.mean()) if len(v) else None)]))
    return out


def test_summaries_of_many_pairs_are_those_of_each_metric_alone():
    """Above the size where metrics are summarised side by side: the same figures, to the last bit, as each
    metric summarised alone and as the groupby definition of the per-task means (tasks that only have same or
    only cross pairs, a pair without a task, rows in no order)."""
    rng = np.random.default_rng(7)
    n = 30_000
    tasks = np.array([f"task-{i:03d}" for i in rng.integers(0, 400, n)], dtype=object)
    tasks[:40] = "only-same"
    tasks[40:80] = "only-cross"
    relation = np.where(rng.random(n) < 0.4, "same", "cross")
    relation[:40], relation[40:80] = "same", "cross"
    pairs = pd.DataFrame({"task_id": tasks, "relation": relation})
    for metric in METRICS:
        pairs[metric] = rng.random(n) * rng.integers(1, 4, n)
    pairs.loc[123, "task_id"] = None
    pairs = pairs.sample(frac=1, random_state=1).reset_index(drop=True)
    together = summarise_all(pairs, METRICS)
    assert list(together) == list(METRICS)
    for metric in METRICS:
        alone = summarise(pairs, metric)
        assert together[metric] == alone
        keys = ("task_id", "same_pairs", "same_mean", "cross_pairs", "cross_mean")
        assert [tuple(t[k] for k in keys) for t in alone["by_task"]] == _groupby_by_task(pairs, metric)
        same = pairs["relation"] == "same"
        assert alone["same_runbook"]["pairs"] == same.sum()
        assert alone["same_runbook"]["mean"] == float(pairs[metric][same].to_numpy().mean())
