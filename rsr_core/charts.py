"""Plotly figure builders: pure functions of data frames (no store, no Streamlit).

Frames come from rsr_core/analysis: `distribution.group_stats` (summarised distributions: a chart carries a few
numbers per group, never every pair), `similarity.score_pairs` (one task's pairs for the heatmap),
`similarity.summary_frame` (summary), `coverage.harness_frame`, `coverage.upset_frame` and
`coverage.funnel_frame`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

RELATION_COLORS = {"same": "#1f77b4", "cross": "#ff7f0e"}
METRIC_LABELS = {
    "exact": "exact (set Jaccard)",
    "multiset": "multiset",
    "order": "order-aware (Indel)",
    "fuzzy": "fuzzy (ratio)",
    "transition": "tool transitions",
}
Shape = Literal["box", "violin"]


def _box(stats: pd.DataFrame, fig: go.Figure) -> None:
    for relation in ("same", "cross"):
        part = stats[stats["relation"] == relation]
        fig.add_trace(
            go.Box(
                x=part["group"].astype(str).tolist(),
                q1=part["q1"].tolist(),
                median=part["median"].tolist(),
                q3=part["q3"].tolist(),
                lowerfence=part["lowerfence"].tolist(),
                upperfence=part["upperfence"].tolist(),
                mean=part["mean"].tolist(),
                name=f"{relation}-runbook",
                marker_color=RELATION_COLORS[relation],
                hovertext=[f"{n:,} pairs" for n in part["n"]],
            )
        )
    fig.update_layout(boxmode="group")


def _violin(stats: pd.DataFrame, fig: go.Figure, groups: list[str]) -> None:
    """Split violins drawn from precomputed densities: same-runbook to the left of each group, cross to the
    right, each half scaled to its own peak."""
    at = {g: i for i, g in enumerate(groups)}
    for relation, side in (("same", -1), ("cross", 1)):
        xs: list[float | None] = []
        ys: list[float | None] = []
        part = stats[stats["relation"] == relation]
        for group, grid, density in zip(part["group"], part["grid"], part["density"], strict=True):
            dens = np.asarray(density, dtype=float)
            width = dens / dens.max() * 0.45 if dens.max() > 0 else dens
            centre = at[str(group)]
            ys_group: list[float] = [float(y) for y in grid]
            xs += [centre, *(centre + side * width).round(4).tolist(), centre, None]
            ys += [ys_group[0], *ys_group, ys_group[-1], None]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                fill="toself",
                name=f"{relation}-runbook",
                line={"color": RELATION_COLORS[relation], "width": 1},
                hoverinfo="name",
            )
        )
    fig.update_xaxes(tickvals=list(range(len(groups))), ticktext=groups, range=[-0.6, len(groups) - 0.4])


def _distribution(stats: pd.DataFrame, shape: Shape, title: str, x_title: str) -> go.Figure:
    """Same vs cross distributions from `distribution.group_stats` rows (box statistics and densities)."""
    fig = go.Figure()
    groups = [str(g) for g in pd.unique(stats["group"])] if len(stats) else []
    if shape == "violin":
        _violin(stats, fig, groups)
    else:
        _box(stats, fig)
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title="similarity", yaxis_range=[0, 1.02])
    return fig


def similarity_by_metric(stats: pd.DataFrame, shape: Shape = "box") -> go.Figure:
    """Same vs cross distribution per metric. `stats`: `distribution.group_stats` rows whose group is a metric
    name (shown with its label)."""
    labelled = stats.assign(group=stats["group"].map(lambda m: METRIC_LABELS.get(m, m)))
    return _distribution(labelled, shape, "Same- vs cross-runbook similarity", "metric")


def similarity_by_task(stats: pd.DataFrame, metric: str, shape: Shape = "box") -> go.Figure:
    """Same vs cross distribution of one metric per task (`distribution.group_stats` rows, group = task)."""
    return _distribution(stats, shape, f"{METRIC_LABELS[metric]} per task", "task")


def similarity_by_category(stats: pd.DataFrame, metric: str, shape: Shape = "box") -> go.Figure:
    """Same vs cross distribution of one metric per task category (group = category, "(none)" when unknown)."""
    return _distribution(stats, shape, f"{METRIC_LABELS[metric]} per category", "category")


def pair_heatmap(pairs: pd.DataFrame, metric: str, task_id: str | None = None) -> go.Figure:
    """Pairwise similarity matrix of one task's trajectories, grouped by runbook (lines between groups).

    `pairs`: trajectory_a, trajectory_b, runbook_a, runbook_b, <metric> (and task_id when `task_id` is given
    to select the task). The diagonal is left blank (a trajectory is not paired with itself).
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
    pos = {t: i for i, t in enumerate(ends["trajectory"])}
    matrix = np.full((len(ends), len(ends)), np.nan)
    a = pairs["trajectory_a"].map(pos).to_numpy(dtype=int)
    b = pairs["trajectory_b"].map(pos).to_numpy(dtype=int)
    matrix[a, b] = matrix[b, a] = pairs[metric].to_numpy(dtype=float)
    labels = [f"{r} · {t}" for r, t in zip(ends["runbook"], ends["trajectory"], strict=True)]
    fig = go.Figure(
        go.Heatmap(z=matrix, x=labels, y=labels, zmin=0, zmax=1, colorscale="Viridis", colorbar_title=metric)
    )
    runbooks = ends["runbook"].to_numpy()
    for edge in np.flatnonzero(runbooks[1:] != runbooks[:-1]) + 0.5:
        for axis in ("x", "y"):
            line = {"x0": edge, "x1": edge, "y0": -0.5, "y1": len(ends) - 0.5}
            if axis == "y":
                line = {"y0": edge, "y1": edge, "x0": -0.5, "x1": len(ends) - 0.5}
            fig.add_shape(type="line", line={"color": "white", "width": 2}, xref="x", yref="y", **line)
    fig.update_layout(
        title=f"{METRIC_LABELS[metric]}: {task_id or 'pairs'} by runbook", yaxis_autorange="reversed"
    )
    return fig


def similarity_table(summary: pd.DataFrame) -> go.Figure:
    """Summary table: `summary` has metric, relation, pairs, mean, ci_low, ci_high (`summary_frame`)."""

    def fmt(v: object) -> str:
        return "–" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3f}"

    ci = [f"[{fmt(lo)}, {fmt(hi)}]" for lo, hi in zip(summary["ci_low"], summary["ci_high"], strict=True)]
    cells = [
        summary["metric"].map(METRIC_LABELS).fillna(summary["metric"]),
        summary["relation"],
        summary["pairs"],
        [fmt(v) for v in summary["mean"]],
        ci,
    ]
    header = ["metric", "runbook", "pairs", "mean", "95% CI (bootstrap)"]
    return go.Figure(go.Table(header={"values": header}, cells={"values": cells}))


def coverage_upset(upset: pd.DataFrame, harnesses: Sequence[str] | None = None) -> go.Figure:
    """UpSet-style overlap of solved-task sets: bars of exclusive intersection sizes over a dot matrix.

    `upset`: one boolean column per harness, `harnesses` (label), `tasks` (size) — `coverage.upset_frame`.
    """
    names = list(harnesses or [c for c in upset.columns if c not in ("harnesses", "degree", "tasks")])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.7, 0.3], vertical_spacing=0.03)
    x = list(range(len(upset)))
    fig.add_trace(
        go.Bar(
            x=x,
            y=upset["tasks"],
            text=upset["tasks"],
            textposition="outside",
            cliponaxis=False,
            hovertext=upset["harnesses"],
            name="tasks",
        ),
        row=1,
        col=1,
    )
    for row, name in enumerate(names):
        member = upset[name].astype(bool).to_numpy()
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[row] * len(x),
                mode="markers",
                marker={"size": 12, "color": np.where(member, "#333333", "#dddddd")},
                showlegend=False,
                hoverinfo="skip",
            ),
            row=2,
            col=1,
        )
    top = float(upset["tasks"].max()) if len(upset) else 0.0
    fig.update_yaxes(
        title_text="tasks solved by exactly these", row=1, col=1, **count_axis(top), range=[0, top * 1.2 + 1]
    )
    fig.update_yaxes(tickvals=list(range(len(names))), ticktext=names, row=2, col=1)
    fig.update_xaxes(showticklabels=False, row=2, col=1)
    fig.update_layout(title="Overlap of solved tasks per harness", showlegend=False)
    return fig


def coverage_bars(harness: pd.DataFrame, union_solved: int | None = None) -> go.Figure:
    """Per-harness attempted / solved / unique bars, with the union as a line.

    `harness`: harness, attempted_tasks, solved_tasks, unique_solved (`coverage.harness_frame`).
    """
    fig = go.Figure()
    for column, label in (
        ("attempted_tasks", "attempted"),
        ("solved_tasks", "solved"),
        ("unique_solved", "solved by no other"),
    ):
        fig.add_trace(
            go.Bar(
                x=harness["harness"],
                y=harness[column],
                name=label,
                text=harness[column],
                textposition="outside",
                cliponaxis=False,
            )
        )
    top = max(
        [float(harness[c].max()) for c in ("attempted_tasks",) if len(harness)] + [float(union_solved or 0)]
    )
    if union_solved is not None:
        fig.add_hline(y=union_solved, line_dash="dash", annotation_text=f"union solved: {union_solved}")
    fig.update_layout(
        barmode="group",
        title="Coverage per harness",
        yaxis={**count_axis(top), "range": [0, top * 1.15 + 1], "title": "tasks"},
        legend={"orientation": "h", "y": -0.15},
    )
    return fig


FUNNEL_COLORS = {"pipeline": "#1f77b4", "runbook status": "#9ecae1", "execution outcome": "#ff7f0e"}


def count_axis(maximum: float) -> dict:
    """Axis settings that tick whole numbers only (no 0.5 tasks), from zero."""
    step = max(1, math.ceil(maximum / 8)) if maximum > 0 else 1
    return {"tick0": 0, "dtick": step, "rangemode": "tozero", "tickformat": ",d"}


def funnel_chart(funnel: pd.DataFrame, expansion_ratio: float | None = None) -> go.Figure:
    """Every stage of the rewrite funnel as horizontal bars in pipeline order, the runbook statuses and the
    executions' outcomes set apart by colour. `funnel`: label, group, count (`coverage.funnel_frame`)."""
    fig = go.Figure()
    order = list(funnel["label"])
    for group, color in FUNNEL_COLORS.items():
        part = funnel[funnel["group"] == group]
        fig.add_trace(
            go.Bar(
                y=part["label"],
                x=part["count"],
                orientation="h",
                name=group,
                marker_color=color,
                text=[f"{n:,}" for n in part["count"]],
                textposition="outside",
                cliponaxis=False,
            )
        )
    title = "Rewrite funnel"
    if expansion_ratio is not None:
        title += f" (expansion ratio {expansion_ratio:.2f})"
    top = float(funnel["count"].max()) if len(funnel) else 0.0
    fig.update_layout(
        title=title,
        barmode="overlay",
        yaxis={"categoryorder": "array", "categoryarray": order[::-1], "automargin": True},
        xaxis={**count_axis(top), "range": [0, top * 1.15 + 1], "title": "count"},
        legend={"orientation": "h", "y": -0.15},
        height=120 + 28 * len(order),
        margin={"r": 40},
    )
    return fig
