"""Chart builders (Vega-Lite specs) on small frames from the analysis functions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from rsr_core import charts, count_charts
from rsr_core.analysis import coverage
from rsr_core.analysis.distribution import DENSITY_POINTS, group_stats
from rsr_core.analysis.similarity import score_pairs

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


def _rows(spec: dict) -> list[dict]:
    return spec["data"]["values"]


def test_similarity_charts_draw_summaries_not_pairs():
    import altair as alt

    pairs = score_pairs(REWRITES, COMMANDS)
    stats = group_stats(pd.concat([_long(pairs, m, None) for m in ("exact", "fuzzy")]))
    box = charts.similarity_by_metric(stats)
    alt.LayerChart.from_dict(box)  # valid Vega-Lite
    rows = _rows(box)
    assert [(r["group"], r["relation"]) for r in rows] == [
        ("exact (set Jaccard)", "same-runbook"), ("exact (set Jaccard)", "cross-runbook"),
        ("fuzzy (ratio)", "same-runbook"), ("fuzzy (ratio)", "cross-runbook"),
    ]  # fmt: skip
    same_exact = pairs.loc[pairs["relation"] == "same", "exact"]
    assert rows[0]["median"] == round(same_exact.median(), 4) and rows[0]["mean"] == round(
        same_exact.mean(), 4
    )
    assert rows[0]["pairs"] == len(same_exact) and "value" not in rows[0]  # statistics, no pair values
    assert box["encoding"]["x"]["sort"] == ["exact (set Jaccard)", "fuzzy (ratio)"]
    violin = charts.similarity_by_metric(stats, shape="violin")
    alt.FacetChart.from_dict(violin)
    halves: dict[tuple[str, str], list[float]] = {}
    for r in _rows(violin):  # a curve's points: g group, r relation, w signed width
        halves.setdefault((r["g"], r["r"]), []).append(r["w"])
    assert len(halves) == 4 and all(len(w) == DENSITY_POINTS for w in halves.values())
    for (_, relation), widths in halves.items():  # same to the left, cross to the right, each to its own peak
        assert (min(widths) == -1.0) if relation == "same-runbook" else (max(widths) == 1.0)
    by_task = group_stats(_long(pairs, "exact", "task_id"))
    assert {r["group"] for r in _rows(charts.similarity_by_task(by_task, "exact"))} == {"t1"}  # t2: no pair
    by_category = group_stats(_long(pairs.fillna({"category": "(none)"}), "fuzzy", "category"))
    spec = charts.similarity_by_category(by_category, "fuzzy", shape="violin")
    assert spec["facet"]["column"]["sort"] == ["files"]  # (none): t2, without pairs


def test_the_heatmap_is_grouped_by_runbook_with_a_line_between_groups():
    import altair as alt

    pairs = score_pairs(REWRITES, COMMANDS)
    heat = charts.pair_heatmap(pairs, "exact", task_id="t1")
    alt.LayerChart.from_dict(heat)
    rect, columns, rows = heat["layer"]
    assert rect["encoding"]["x"]["scale"]["domain"] == ["r1 · a", "r1 · b", "r2 · c"]  # grouped by runbook
    names = {n["k"]: n["t"] for n in heat["transform"][0]["from"]["data"]["values"]}
    cells = {(names[c["i"]], names[c["j"]]): c["v"] for c in _rows(heat)}
    assert cells[("r1 · a", "r1 · b")] == cells[("r1 · b", "r1 · a")] == 0.5  # both halves of the matrix
    assert len(cells) == 6 and ("r1 · a", "r1 · a") not in cells  # the diagonal is blank
    assert columns["data"]["values"] == rows["data"]["values"] == [{"t": "r2 · c"}]  # one boundary
    assert columns["encoding"]["x"]["bandPosition"] == 0  # at the edge of the group's first column


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
        assert len(json.dumps(charts.similarity_by_task(group_stats(long), "exact", shape=shape))) < 20_000


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
    assert by_group["execution outcome"] == {
        "tampered with the verifier": 1,
        "reward contradicted by the tests' record": 0,
        "answer transfer": 1,
    }
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


def test_charts_render_on_the_server_as_svg_with_their_labels_escaped():
    """The studio draws every spec as an SVG image (rsr_core/ui/chart_image.py): labels from a stranger's
    corpus stay text, invisible characters in them are drawn as escapes, and a box's median and mean keep their own colours under the chart's colour encoding."""
    import re

    from rsr_core.ui import chart_image

    hostile = '<script>alert(1)</script></svg>&"'
    stats = {"harnesses": {hostile: {"attempted_tasks": 2, "solved_tasks": 1, "unique_solved": 0}}}
    bars = chart_image.svg(count_charts.coverage_bars(coverage.harness_frame(stats), 1), chart_image.HALF)
    assert bars.startswith("<svg") and bars.count("</svg>") == 1 and "<script" not in bars
    assert "&lt;script&gt;" in bars and 'width="' in bars
    invisible = "rtl-\u202egnp.exe zero\u200bwidth"
    stats = {"harnesses": {invisible: {"attempted_tasks": 2, "solved_tasks": 1, "unique_solved": 0}}}
    bars = chart_image.svg(count_charts.coverage_bars(coverage.harness_frame(stats), 1), chart_image.HALF)
    assert "\u202e" not in bars and "\u200b" not in bars and "rtl-\\u202egnp.exe" in bars
    pairs = score_pairs(REWRITES, COMMANDS)
    box = chart_image.svg(charts.similarity_by_metric(group_stats(_long(pairs, "exact", None))))
    fills = dict(re.findall(r'aria-roledescription="(tick|point)"[^>]*?fill="([^"]+)"', box))
    assert fills == {"tick": "black", "point": "white"}, fills


def test_count_axes_tick_whole_numbers_only_on_short_ranges():
    """Vega sizes an axis's tick count to its length and then ignores `tickMinStep`: a range of two tasks was
    ticked 0, 0.5, 1, 1.5, 2 and read "0 1 1 2 2"."""
    import re

    from rsr_core.ui import chart_image

    def axis_labels(svg: str) -> list[list[str]]:
        groups = re.findall(r'class="mark-text role-axis-label"(.*?)</g>', svg, flags=re.S)
        return [re.findall(r">([^<]*)</text>", g) for g in groups]

    outcomes = pd.DataFrame({"harness": ["a", "a"], "task_id": ["t1", "t2"], "solved": [True, True]})
    assert ["0", "1", "2"] in axis_labels(
        chart_image.svg(count_charts.coverage_upset(coverage.upset_frame(outcomes)))
    )
    stats = {"harnesses": {"a": {"attempted_tasks": 2, "solved_tasks": 1, "unique_solved": 0}}}
    bars = chart_image.svg(count_charts.coverage_bars(coverage.harness_frame(stats), 1), chart_image.HALF)
    assert ["0", "1", "2"] in axis_labels(bars)
