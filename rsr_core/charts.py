"""Vega-Lite specs of the Similarity page's charts: pure functions of data frames (no store, no Streamlit).

Frames come from rsr_core/analysis: `distribution.group_stats` (summarised distributions: a chart carries a few
numbers per group, never every pair) and `similarity.score_pairs` / the stored pairs (one task's pairs for the
heatmap). Every chart of the studio is Vega-Lite (the Overview's counts: rsr_core/count_charts.py), rendered
to an image on the server (rsr_core/ui/chart_image.py): a plotly figure cost a page load of the Similarity page
about 0.13 s of the browser's time and its first use in a page 0.2-0.45 s, Streamlit's Vega-Lite element
0.13 s, an image next to nothing.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

Spec = dict[str, Any]
RELATION_COLORS = {"same": "#1f77b4", "cross": "#ff7f0e"}
METRIC_LABELS = {
    "exact": "exact (set Jaccard)",
    "multiset": "multiset",
    "order": "order-aware (Indel)",
    "fuzzy": "fuzzy (ratio)",
    "transition": "tool transitions",
}
Shape = Literal["box", "violin"]
RELATIONS = {"same": "same-runbook", "cross": "cross-runbook"}
BOX_FIELDS = ("lowerfence", "q1", "median", "q3", "upperfence", "mean")
FACET_WIDTH = (36, 110)  # px per group of a violin chart: narrowest, widest
SIMILARITY = {"type": "quantitative", "title": "similarity", "scale": {"domain": [0, 1]}}


def _color() -> Spec:
    return {
        "field": "relation",
        "type": "nominal",
        "title": None,
        "scale": {"domain": list(RELATIONS.values()), "range": [RELATION_COLORS[r] for r in RELATIONS]},
        "legend": {"orient": "bottom"},
    }


def _groups(stats: pd.DataFrame) -> list[str]:
    return [str(g) for g in pd.unique(stats["group"])] if len(stats) else []


def _box(stats: pd.DataFrame, title: str, x_title: str) -> Spec:
    """Boxes from the statistics: whiskers (rule), quartiles (bar), median (tick), mean (point)."""
    groups = _groups(stats)
    values = [
        {"group": str(row["group"]), "relation": RELATIONS[row["relation"]], "pairs": int(row["n"]),
         **{f: round(float(row[f]), 4) for f in BOX_FIELDS}}
        for _, row in stats.iterrows()
    ]  # fmt: skip
    x = {"field": "group", "type": "nominal", "sort": groups, "title": x_title,
         "axis": {"labelAngle": -30 if len(groups) > 6 else 0, "labelLimit": 180}}  # fmt: skip
    tooltip = [{"field": "group", "title": x_title}, {"field": "relation"},
               {"field": "pairs", "type": "quantitative", "format": ",d"},
               *({"field": f, "type": "quantitative", "format": ".3f"} for f in BOX_FIELDS)]  # fmt: skip
    offset = {"field": "relation", "sort": list(RELATIONS.values())}
    return {
        "title": title,
        "data": {"values": values},
        "encoding": {"x": x, "xOffset": offset, "color": _color(), "tooltip": tooltip},
        "layer": [
            {"mark": "rule", "encoding": {"y": {"field": "lowerfence", **SIMILARITY}, "y2": {"field": "upperfence"}}},
            {"mark": {"type": "bar", "width": {"band": 0.8}},
             "encoding": {"y": {"field": "q1", **SIMILARITY}, "y2": {"field": "q3"}}},
            # Colours as encoded values: the chart's colour encoding would override a mark's own colour.
            {"mark": {"type": "tick", "thickness": 2, "width": {"band": 0.8}, "opacity": 1},
             "encoding": {"y": {"field": "median", **SIMILARITY}, "color": {"value": "black"}}},
            {"mark": {"type": "point", "shape": "diamond", "filled": True, "size": 30, "opacity": 1},
             "encoding": {"y": {"field": "mean", **SIMILARITY}, "color": {"value": "white"}}},
        ],
    }  # fmt: skip


def _header_labels(groups: int, width: int) -> Spec:
    """Group names under violin columns: level when they fit, slanted (and longer) when there are many."""
    if groups <= 6:
        return {"labelAngle": 0, "labelLimit": width}
    return {"labelAngle": -35, "labelAlign": "right", "labelBaseline": "middle", "labelLimit": 180}


def _violin(stats: pd.DataFrame, title: str, x_title: str) -> Spec:
    """Split violins from the precomputed densities, one column per group: same-runbook to the left of the
    centre line, cross-runbook to the right, each half scaled to its own peak. One row per point of a curve
    (g group, r relation, y similarity, w signed width; Streamlit sends the rows as an Arrow table)."""
    groups = _groups(stats)
    values = []
    for _, row in stats.iterrows():
        dens = [float(d) for d in row["density"]]
        peak = max(dens) if dens and max(dens) > 0 else 1.0
        side = -1 if row["relation"] == "same" else 1
        group, relation = str(row["group"]), RELATIONS[row["relation"]]
        values += [
            {"g": group, "r": relation, "y": float(y), "w": round(side * d / peak, 3)}
            for y, d in zip(row["grid"], dens, strict=True)
        ]
    width = max(FACET_WIDTH[0], min(FACET_WIDTH[1], 900 // max(1, len(groups))))
    return {
        "title": title,
        "data": {"values": values},
        "facet": {
            "column": {
                "field": "g",
                "type": "nominal",
                "sort": groups,
                "title": x_title,
                "header": {
                    "labelOrient": "bottom",
                    "titleOrient": "bottom",
                    **_header_labels(len(groups), width),
                },
            }
        },
        "spacing": 0,
        "spec": {
            "width": width,
            "mark": {"type": "area", "orient": "horizontal", "opacity": 0.8},
            "encoding": {
                "y": {"field": "y", **SIMILARITY},
                "x": {"field": "w", "type": "quantitative", "scale": {"domain": [-1, 1]}, "axis": None},
                "x2": {"datum": 0},
                "color": {**_color(), "field": "r"},
                "detail": {"field": "r"},
                "tooltip": [{"field": "g", "title": x_title}, {"field": "r", "title": "relation"}],
            },
        },
    }


def distribution_chart(stats: pd.DataFrame, shape: Shape, title: str, x_title: str) -> Spec:
    """Same vs cross distributions from `distribution.group_stats` rows, as boxes or split violins."""
    return (_violin if shape == "violin" else _box)(stats, title, x_title)


def similarity_by_metric(stats: pd.DataFrame, shape: Shape = "box") -> Spec:
    """Same vs cross distribution per metric (`group_stats` rows whose group is a metric, shown by its label)."""
    labelled = stats.assign(group=stats["group"].map(lambda m: METRIC_LABELS.get(m, m)))
    return distribution_chart(labelled, shape, "Same- vs cross-runbook similarity", "metric")


def similarity_by_task(stats: pd.DataFrame, metric: str, shape: Shape = "box") -> Spec:
    """Same vs cross distribution of one metric per task (`group_stats` rows, group = task)."""
    return distribution_chart(stats, shape, f"{METRIC_LABELS[metric]} per task", "task")


def similarity_by_category(stats: pd.DataFrame, metric: str, shape: Shape = "box") -> Spec:
    """Same vs cross distribution of one metric per task category (group = category, "(none)" when unknown)."""
    return distribution_chart(stats, shape, f"{METRIC_LABELS[metric]} per category", "category")


HEATMAP_CELL_PX = (8, 14)  # side of one cell: smallest, largest (a row's name is written beside it)
HEATMAP_SIDE_PX = 720  # the heatmap's side, unless its cells would be smaller or larger


def pair_heatmap(pairs: pd.DataFrame, metric: str, task_id: str | None = None) -> Spec:
    """Pairwise similarity matrix of one task's trajectories, grouped by runbook (white lines between groups).

    `pairs`: trajectory_a, trajectory_b, runbook_a, runbook_b, <metric> (and task_id when `task_id` is given
    to select the task). The diagonal is left blank (a trajectory is not paired with itself). Cells carry two
    indices and a score (i, j, v); the trajectories' names are looked up in the browser.
    """
    if task_id is not None:
        pairs = pairs[pairs["task_id"] == task_id]
    ends = pd.concat(
        [
            pairs[["trajectory_a", "runbook_a"]].set_axis(["trajectory", "runbook"], axis=1),
            pairs[["trajectory_b", "runbook_b"]].set_axis(["trajectory", "runbook"], axis=1),
        ]
    ).drop_duplicates("trajectory")
    ends["runbook"] = ends["runbook"].astype(object).where(ends["runbook"].notna(), "(unknown)")
    ends = ends.sort_values(["runbook", "trajectory"]).reset_index(drop=True)
    labels = [f"{r} · {t}" for r, t in zip(ends["runbook"], ends["trajectory"], strict=True)]
    pos = {t: i for i, t in enumerate(ends["trajectory"])}
    a = pairs["trajectory_a"].map(pos).tolist()
    b = pairs["trajectory_b"].map(pos).tolist()
    scores = [round(float(v), 4) for v in pairs[metric]]
    cells = [{"i": i, "j": j, "v": v} for i, j, v in zip(a + b, b + a, scores + scores, strict=True)]
    names = {
        "data": {"values": [{"k": k, "t": t} for k, t in enumerate(labels)]},
        "key": "k",
        "fields": ["t"],
    }
    runbooks = ends["runbook"].tolist()
    starts = [{"t": labels[k]} for k in range(1, len(labels)) if runbooks[k] != runbooks[k - 1]]
    cell = max(HEATMAP_CELL_PX[0], min(HEATMAP_CELL_PX[1], HEATMAP_SIDE_PX // max(1, len(labels))))
    axis = {"type": "nominal", "title": None, "scale": {"domain": labels}}
    line = {"type": "rule", "color": "white", "strokeWidth": 2}
    return {
        "title": f"{METRIC_LABELS[metric]}: {task_id or 'pairs'} by runbook",
        "width": {"step": cell},
        "height": {"step": cell},
        "data": {"values": cells},
        "transform": [
            {"lookup": "i", "from": names, "as": ["a"]},
            {"lookup": "j", "from": names, "as": ["b"]},
        ],
        "layer": [
            {
                "mark": "rect",
                "encoding": {
                    "x": {
                        "field": "a",
                        **axis,
                        "axis": {"labelLimit": 160, "labelAngle": -90, "labelOverlap": False},
                    },
                    "y": {"field": "b", **axis, "axis": {"labelLimit": 160, "labelOverlap": False}},
                    "color": {
                        "field": "v",
                        "type": "quantitative",
                        "title": metric,
                        "scale": {"domain": [0, 1], "scheme": "viridis"},
                    },
                    "tooltip": [
                        {"field": "b", "title": "row"},
                        {"field": "a", "title": "column"},
                        {"field": "v", "type": "quantitative", "title": metric, "format": ".3f"},
                    ],
                },
            },
            {
                "data": {"values": starts},
                "mark": line,
                "encoding": {"x": {"field": "t", **axis, "bandPosition": 0}},
            },
            {
                "data": {"values": starts},
                "mark": line,
                "encoding": {"y": {"field": "t", **axis, "bandPosition": 0}},
            },
        ],
    }
