"""Plotly figure builders: pure functions of data frames (no store, no Streamlit).

Frames come from rsr_core/analysis: `distribution.group_stats` (summarised distributions: a chart carries a few
numbers per group, never every pair), `similarity.score_pairs` (one task's pairs for the heatmap),
`similarity.summary_frame` (summary). The Overview's count charts are Vega-Lite specs (rsr_core/count_charts.py).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

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
