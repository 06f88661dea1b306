"""Vega-Lite specs of the Overview's count charts: pure functions of data frames (no store, no Streamlit).

Counts are drawn with Vega-Lite, rendered to images on the server (rsr_core/ui/chart_image.py; three plotly
figures cost a page load about 0.3 s in the browser, the same three as Streamlit's Vega-Lite elements 0.17 s,
as images next to nothing); so are the Similarity page's charts (rsr_core/charts.py). Frames come from
rsr_core/analysis/coverage.py: `harness_frame`, `upset_frame` and `funnel_frame`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

Spec = dict[str, Any]
FUNNEL_COLORS = {"pipeline": "#1f77b4", "runbook status": "#9ecae1", "execution outcome": "#ff7f0e"}
COVERAGE_MEASURES = {
    "attempted_tasks": "attempted",
    "solved_tasks": "solved",
    "unique_solved": "solved by no other",
}
WHOLE = {"format": ",d", "tickMinStep": 1}  # count axes tick whole numbers only (no 0.5 tasks)
TICKS = 6  # at most, on a count axis


def _whole(top: int) -> Spec:
    """A count axis up to `top`: Vega leaves out `tickMinStep` when it sizes the tick count to the axis's
    length, and a short range ticked 0, 0.5, 1, 1.5, 2 reads "0 1 1 2 2"; a tick count no larger than the range
    keeps every tick whole."""
    return {**WHOLE, "tickCount": max(1, min(TICKS, top))}


def _bars_with_counts(encoding: Spec, count: str, **label: Any) -> list[Spec]:
    """A layer of bars and a layer writing each bar's count at its end (`label`: the text mark's placement)."""
    position = {k: v for k, v in encoding.items() if k in ("x", "y", "xOffset")}
    return [
        {"mark": {"type": "bar", "tooltip": True}, "encoding": encoding},
        {
            "mark": {"type": "text", **label},
            "encoding": {**position, "text": {"field": count, "format": ",d"}},
        },
    ]


def coverage_bars(harness: pd.DataFrame, union_solved: int | None = None) -> Spec:
    """Per-harness attempted / solved / unique bars side by side, with the union solved as a dashed rule.

    `harness`: harness, attempted_tasks, solved_tasks, unique_solved (`coverage.harness_frame`)."""
    values = [
        {"harness": str(row["harness"]), "measure": label, "tasks": int(row[column])}
        for _, row in harness.iterrows()
        for column, label in COVERAGE_MEASURES.items()
    ]
    order = list(COVERAGE_MEASURES.values())
    x = {"field": "harness", "type": "nominal", "title": None, "axis": {"labelAngle": 0}}
    top = int(harness[list(COVERAGE_MEASURES)].to_numpy().max()) if len(harness) else 0
    y = {"field": "tasks", "type": "quantitative", "title": "tasks", "axis": _whole(top)}
    offset = {"field": "measure", "sort": order}
    color = {"field": "measure", "sort": order, "title": None, "legend": {"orient": "bottom"}}
    layers = _bars_with_counts({"x": x, "xOffset": offset, "y": y, "color": color}, "tasks", dy=-6)
    if union_solved is not None:
        rule = {"union": int(union_solved), "label": f"union solved: {union_solved}"}
        layers.append(
            {
                "data": {"values": [rule]},
                "layer": [
                    {
                        "mark": {"type": "rule", "strokeDash": [5, 4]},
                        "encoding": {"y": {"field": "union", "type": "quantitative"}},
                    },
                    {
                        "mark": {"type": "text", "align": "right", "dy": -6, "x": "width"},
                        "encoding": {
                            "y": {"field": "union", "type": "quantitative"},
                            "text": {"field": "label"},
                        },
                    },
                ],
            }
        )
    return {"title": "Coverage per harness", "data": {"values": values}, "layer": layers, "height": 320}


def coverage_upset(upset: pd.DataFrame, harnesses: Sequence[str] | None = None) -> Spec:
    """UpSet-style overlap of solved-task sets: bars of exclusive intersection sizes over a dot matrix.

    `upset`: one boolean column per harness, `harnesses` (label), `tasks` (size) — `coverage.upset_frame`."""
    names = list(harnesses or [c for c in upset.columns if c not in ("harnesses", "degree", "tasks")])
    bars = [
        {"set": i, "harnesses": str(r["harnesses"]), "tasks": int(r["tasks"])} for i, r in upset.iterrows()
    ]
    dots = [
        {"set": i, "harness": name, "member": bool(r[name])} for i, r in upset.iterrows() for name in names
    ]
    x = {"field": "set", "type": "ordinal", "axis": None}
    step = max(8, min(44, 520 // max(1, len(bars))))  # a concatenation cannot stretch: it fits its column
    return {
        "title": "Overlap of solved tasks per harness",
        "vconcat": [
            {
                "data": {"values": bars},
                "height": 220,
                "width": {"step": step},
                "layer": _bars_with_counts(
                    {
                        "x": x,
                        "y": {
                            "field": "tasks",
                            "type": "quantitative",
                            "title": "tasks solved by exactly these",
                            "axis": _whole(int(upset["tasks"].max()) if len(upset) else 0),
                        },
                        "tooltip": [{"field": "harnesses"}, {"field": "tasks", "format": ",d"}],
                    },
                    "tasks",
                    dy=-6,
                ),
            },
            {
                "data": {"values": dots},
                "height": 22 * max(1, len(names)),
                "width": {"step": step},
                "mark": {"type": "circle", "size": 120, "opacity": 1},
                "encoding": {
                    "x": x,
                    "y": {"field": "harness", "type": "nominal", "title": None, "sort": names},
                    "color": {
                        "field": "member",
                        "type": "nominal",
                        "legend": None,
                        "scale": {"domain": [True, False], "range": ["#333333", "#dddddd"]},
                    },
                },
            },
        ],
        "resolve": {"scale": {"x": "shared"}},
    }


def funnel_chart(funnel: pd.DataFrame, expansion_ratio: float | None = None) -> Spec:
    """Every stage of the rewrite funnel as horizontal bars in pipeline order, the runbook statuses and the
    executions' outcomes set apart by colour. `funnel`: label, group, count (`coverage.funnel_frame`)."""
    values = [
        {"label": str(r["label"]), "group": str(r["group"]), "count": int(r["count"])}
        for _, r in funnel.iterrows()
    ]
    order = [v["label"] for v in values]
    title = "Rewrite funnel"
    if expansion_ratio is not None:
        title += f" (expansion ratio {expansion_ratio:.2f})"
    y = {"field": "label", "type": "nominal", "sort": order, "title": None, "axis": {"labelLimit": 320}}
    x = {"field": "count", "type": "quantitative", "title": "count", "axis": WHOLE}
    color = {
        "field": "group",
        "title": None,
        "scale": {"domain": list(FUNNEL_COLORS), "range": list(FUNNEL_COLORS.values())},
        "legend": {"orient": "bottom"},
    }
    return {
        "title": title,
        "data": {"values": values},
        "height": {"step": 26},
        "layer": _bars_with_counts({"y": y, "x": x, "color": color}, "count", align="left", dx=4),
    }
