"""Plotly figure builders: pure functions of data frames (no store, no Streamlit).

Frames come from rsr_core/analysis: `similarity.score_pairs` (one task's pairs for the heatmap) and
`similarity.summary_frame` (summary). The charts drawn with every page load are Vega-Lite specs, which the
browser draws in a fraction of plotly's time: the Overview's counts (rsr_core/count_charts.py) and the
similarity distributions (rsr_core/distribution_charts.py).
"""

from __future__ import annotations

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
