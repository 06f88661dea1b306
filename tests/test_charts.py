"""Figure builders on small frames from the analysis functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rsr_core import charts, count_charts
from rsr_core.analysis import coverage
from rsr_core.analysis.distribution import group_stats
from rsr_core.analysis.similarity import score_pairs, summary_frame

REWRITES = pd.DataFrame(
    {
        "trajectory_id": ["a", "b", "c", "d"],
        "task_id": ["t1", "t1", "t1", "t2"],
        "runbook_id": ["r1", "r1", "r2", "r3"],
        "category": ["files", "files", "files", None],
    }
)
COMMANDS = pd.DataFrame(
    {
        "trajectory_id": ["a", "a", "b", "c", "d"],
        "seq": [0, 1, 0, 0, 0],
        "command": ["ls", "cat x", "ls", "pwd", "ls"],
    }
)


def _long(pairs: pd.DataFrame, metric: str, group: str | None) -> pd.DataFrame:
    frame = pairs.rename(columns={metric: "value"})
    return frame.assign(group=frame[group] if group else metric)[["group", "relation", "value"]]


def test_similarity_figures_draw_summaries_not_pairs():
    pairs = score_pairs(REWRITES, COMMANDS)
    stats = group_stats(pd.concat([_long(pairs, m, None) for m in ("exact", "fuzzy")]))
    for shape in ("box", "violin"):
        fig = charts.similarity_by_metric(stats, shape=shape)
        assert isinstance(fig, go.Figure) and [t.name for t in fig.data] == ["same-runbook", "cross-runbook"]
    box = charts.similarity_by_metric(stats).data[0]
    assert list(box.x) == ["exact (set Jaccard)", "fuzzy (ratio)"] and box.y is None  # statistics, no values
    same_exact = pairs.loc[pairs["relation"] == "same", "exact"]
    assert box.median[0] == same_exact.median() and box.mean[0] == same_exact.mean()
    by_task = group_stats(_long(pairs, "exact", "task_id"))
    assert len(charts.similarity_by_task(by_task, "exact").data) == 2
    by_category = group_stats(_long(pairs.fillna({"category": "(none)"}), "fuzzy", "category"))
    assert len(charts.similarity_by_category(by_category, "fuzzy", shape="violin").data) == 2
    heat = charts.pair_heatmap(pairs, "exact", task_id="t1")
    z = heat.data[0].z
    assert len(z) == 3 and z[0][1] == 0.5  # a-b, grouped by runbook (r1: a, b; r2: c)
    assert len(heat.layout.shapes) == 2  # one boundary, drawn on both axes
    table = charts.similarity_table(summary_frame(pairs))
    assert table.data[0].cells.values[0][0] == "exact (set Jaccard)"


def test_a_chart_of_many_pairs_stays_small():
    rng = np.random.default_rng(0)
    n = 200_000
    long = pd.DataFrame(
        {
            "group": rng.choice(["a", "b", "c"], n),
            "relation": rng.choice(["same", "cross"], n),
            "value": rng.random(n),
        }
    )
    for shape in ("box", "violin"):
        assert len(charts.similarity_by_task(group_stats(long), "exact", shape=shape).to_json()) < 20_000


def test_coverage_and_funnel_charts():
    outcomes = pd.DataFrame(
        {"harness": ["rsrt", "rsrt", "statem"], "task_id": ["t1", "t2", "t2"], "solved": [True, True, True]}
    )
    upset = coverage.upset_frame(outcomes)
    spec = count_charts.coverage_upset(upset)
    bars, dots = (view["data"]["values"] for view in spec["vconcat"])
    assert [b["tasks"] for b in bars] == [1, 1]  # t2 by both, t1 by rsrt only
    assert len(dots) == 4 and sum(d["member"] for d in dots) == 3  # one dot per set and harness
    stats = {"harnesses": {"rsrt": {"attempted_tasks": 2, "solved_tasks": 2, "unique_solved": 1}}}
    spec = count_charts.coverage_bars(coverage.harness_frame(stats), union_solved=2)
    assert {(v["measure"], v["tasks"]) for v in spec["data"]["values"]} == {
        ("attempted", 2),
        ("solved", 2),
        ("solved by no other", 1),
    }
    assert spec["layer"][-1]["data"]["values"][0]["union"] == 2
    funnel = coverage.funnel_frame(
        {"sources": 2, "runbooks": 8, "critic_rejected": 1, "human_rejected": 1, "approved": 6,
         "executions": 32, "verifier_tampered": 1, "verified": 28, "answer_transfer": 1, "kept": 27}
    )  # fmt: skip
    spec = count_charts.funnel_chart(funnel, 13.5)
    by_group: dict[str, dict[str, int]] = {}
    for v in spec["data"]["values"]:
        by_group.setdefault(v["group"], {})[v["label"]] = v["count"]
    assert by_group["pipeline"] == {
        "source trajectories": 2, "runbooks (all critic rounds)": 8, "executions": 32,
        "passed the verifier": 28, "kept for training": 27,
    }  # fmt: skip
    assert by_group["runbook status"]["rejected by a reviewer"] == 1
    assert by_group["execution outcome"] == {"tampered with the verifier": 1, "answer transfer": 1}
    assert spec["layer"][0]["encoding"]["x"]["axis"] == {"format": ",d", "tickMinStep": 1}  # whole numbers
    assert "13.50" in spec["title"]


def test_count_charts_are_valid_vega_lite():
    """Checked against the Vega-Lite schema (through altair, which Streamlit depends on)."""
    import altair as alt

    outcomes = pd.DataFrame({"harness": ["a", "b"], "task_id": ["t1", "t1"], "solved": [True, True]})
    alt.VConcatChart.from_dict(count_charts.coverage_upset(coverage.upset_frame(outcomes)))
    stats = {"harnesses": {"a": {"attempted_tasks": 2, "solved_tasks": 1, "unique_solved": 0}}}
    alt.LayerChart.from_dict(count_charts.coverage_bars(coverage.harness_frame(stats), union_solved=1))
    alt.LayerChart.from_dict(count_charts.funnel_chart(coverage.funnel_frame({"sources": 2}), None))
