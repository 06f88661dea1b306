"""The studio's charts as plotly figures a researcher can explore: pure functions of summaries computed on the
server (`distribution.group_stats` rows, one task's stored pairs, the Overview's count frames), so a figure
carries a few numbers per group, never every pair.

Hover shows the values behind a mark and the trajectory ids behind it where there are some (a heatmap cell's
pair, a task's median pair); the marks that stand for one pair (heatmap cells, a task's median marker) carry
its position in `Figure.pairs`, which the page turns into a link when the mark is clicked. Every text from the
corpus (task ids, trajectory ids, runbook ids, categories, harness names) goes through `label`: plotly reads
tags in its text (`<b>`, `<a href>`), and the studio shows it as `text.shown` writes it.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go

from rsr_core.ui.text import shown
from rsr_core.vocabulary import SIMILARITY_METRIC_INFO

Shape = Literal["box", "violin"]
RELATIONS = {"same": "same-runbook", "cross": "cross-runbook"}
RELATION_COLORS = {"same": "#1f77b4", "cross": "#ff7f0e"}
METRIC_LABELS = {m.name: m.label for m in SIMILARITY_METRIC_INFO}
FUNNEL_COLORS = {"pipeline": "#1f77b4", "runbook status": "#9ecae1", "execution outcome": "#ff7f0e"}
COVERAGE_MEASURES = {
    "attempted_tasks": "attempted",
    "solved_tasks": "solved",
    "unique_solved": "solved by no other",
}
HEATMAP_CELL_PX = (8, 36)  # side of one cell: smallest, largest
HEATMAP_SIDE_PX = 560  # the heatmap's side, unless its cells would be smaller or larger
HEATMAP_LABEL_PX = (6, 360)  # the width of one character of an axis label, and the most labels may take
MARGIN = {"l": 10, "r": 10, "t": 40, "b": 10}
SIMILARITY_AXIS = {"title": "similarity", "range": [-0.02, 1.02]}


def label(text: object) -> str:
    """Corpus text as a plotly label: escapes for invisible characters (`text.shown`) and for markup."""
    return html.escape(shown(str(text)), quote=False)


def _count_axis(top: float) -> dict[str, Any]:
    """A count axis up to `top` that ticks whole numbers only (a short range ticked 0, 0.5, 1 would read 0 0 1)."""
    return {"tickformat": ",d", "tick0": 0, "dtick": max(1, math.ceil(top / 6)), "rangemode": "tozero"}


def _top(frame: pd.DataFrame) -> float:
    return float(frame.to_numpy().max()) if frame.size else 0.0


@dataclass
class Figure:
    """A figure and the pairs its clickable marks stand for (a mark's customdata[0] is an index into them)."""

    figure: go.Figure
    pairs: list[tuple[str, str]] = field(default_factory=list)
    clickable: bool = False


def _layout(fig: go.Figure, title: str, **more: Any) -> go.Figure:
    fig.update_layout(
        title={"text": label(title), "x": 0, "xanchor": "left"},
        margin=MARGIN,
        legend={"orientation": "h", "y": -0.15},
        template="plotly_white",
        **more,
    )
    return fig


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


def _groups(stats: pd.DataFrame) -> list[str]:
    return [str(g) for g in pd.unique(stats["group"])] if len(stats) else []


def _median_pairs(
    stats: pd.DataFrame, medians: pd.DataFrame | None
) -> dict[tuple[str, str], tuple[str, str]]:
    """(group, relation) -> the pair whose score is closest to that box's median (`medians` rows: group,
    relation, trajectory_a, trajectory_b), for the groups that have one."""
    if medians is None or medians.empty:
        return {}
    return {
        (str(r.group), str(r.relation)): (str(r.trajectory_a), str(r.trajectory_b))
        for r in medians.itertuples(index=False)
    }


def _box(stats: pd.DataFrame, title: str, x_title: str, medians: pd.DataFrame | None) -> Figure:
    """Boxes drawn from their statistics (quartiles, whiskers, mean) and a marker on each median that names the
    box's figures and, per task, its median pair (a click opens that pair)."""
    groups = _groups(stats)
    labels = {g: label(g) for g in groups}
    chosen = _median_pairs(stats, medians)
    fig, pairs = go.Figure(), list[tuple[str, str]]()
    for relation, name in RELATIONS.items():
        part = stats[stats["relation"] == relation]
        if part.empty:
            continue
        x = [labels[str(g)] for g in part["group"]]
        fig.add_trace(
            go.Box(
                x=x, q1=part["q1"].round(4), median=part["median"].round(4), q3=part["q3"].round(4),
                lowerfence=part["lowerfence"].round(4), upperfence=part["upperfence"].round(4),
                mean=part["mean"].round(4), name=name, legendgroup=relation, offsetgroup=relation,
                marker_color=RELATION_COLORS[relation], boxpoints=False, hoverinfo="skip",
            )
        )  # fmt: skip
        custom, texts = [], []
        for row in _rows(part):
            pair = chosen.get((str(row["group"]), relation))
            custom.append([len(pairs) if pair else -1])
            if pair:
                pairs.append(pair)
            texts.append(
                f"{x_title} {labels[str(row['group'])]} · {name}<br>pairs {int(row['n']):,}<br>"
                f"median {row['median']:.3f} · mean {row['mean']:.3f}<br>quartiles {row['q1']:.3f} – {row['q3']:.3f}<br>"
                f"whiskers {row['lowerfence']:.3f} – {row['upperfence']:.3f}"
                + (f"<br>median pair {label(pair[0])} × {label(pair[1])} (click to open)" if pair else "")
            )
        fig.add_trace(
            go.Scatter(
                x=x, y=part["median"].round(4), mode="markers", name=name, legendgroup=relation,
                offsetgroup=relation, showlegend=False, customdata=custom, hovertext=texts,
                hovertemplate="%{hovertext}<extra></extra>",
                marker={"symbol": "line-ew-open", "size": 18, "color": "black", "line": {"width": 2}},
            )
        )  # fmt: skip
    _layout(fig, title, boxmode="group", scattermode="group", yaxis=SIMILARITY_AXIS, xaxis={"title": x_title},
            height=440)  # fmt: skip
    fig.update_xaxes(categoryorder="array", categoryarray=[labels[g] for g in groups])
    return Figure(fig, pairs, clickable=bool(pairs))


def _violin(stats: pd.DataFrame, title: str, x_title: str) -> Figure:
    """Split violins from the precomputed densities, one column per group: same-runbook to the left of the
    centre line, cross-runbook to the right, each half scaled to its own peak."""
    groups = _groups(stats)
    position = {g: i for i, g in enumerate(groups)}
    fig, legend = go.Figure(), set()
    for row in _rows(stats):
        dens = [float(d) for d in row["density"]]
        peak = max(dens) if dens and max(dens) > 0 else 1.0
        side = -0.45 if row["relation"] == "same" else 0.45
        centre = position[str(row["group"])]
        grid = [float(y) for y in row["grid"]]
        xs = [centre + side * d / peak for d in dens] + [centre] * len(grid)
        ys = grid + grid[::-1]
        text = f"{x_title} {label(str(row['group']))} · {RELATIONS[row['relation']]}<br>pairs {int(row['n']):,}<br>"
        text += f"median {row['median']:.3f} · mean {row['mean']:.3f}"
        fig.add_trace(
            go.Scatter(
                x=[round(v, 3) for v in xs], y=ys, fill="toself", mode="lines", line={"width": 0.5},
                fillcolor=RELATION_COLORS[row["relation"]], opacity=0.8, name=RELATIONS[row["relation"]],
                legendgroup=row["relation"], showlegend=row["relation"] not in legend, hoveron="fills",
                text=text, hoverinfo="text", marker_color=RELATION_COLORS[row["relation"]],
            )
        )  # fmt: skip
        legend.add(row["relation"])
    ticks = {
        "tickmode": "array",
        "tickvals": list(range(len(groups))),
        "ticktext": [label(g) for g in groups],
    }
    _layout(
        fig, title, yaxis=SIMILARITY_AXIS, xaxis={"title": x_title, **ticks, "zeroline": False}, height=440
    )
    return Figure(fig)


def distribution(
    stats: pd.DataFrame, shape: Shape, title: str, x_title: str, medians: pd.DataFrame | None = None
) -> Figure:
    """Same vs cross distributions from `distribution.group_stats` rows, as boxes or split violins; `medians`
    (group, relation, trajectory_a, trajectory_b) names each box's median pair."""
    return _violin(stats, title, x_title) if shape == "violin" else _box(stats, title, x_title, medians)


def by_metric(stats: pd.DataFrame, shape: Shape = "box", medians: pd.DataFrame | None = None) -> Figure:
    """Same vs cross distribution per metric (group = metric, shown by its label); a box's median marker opens
    its median pair."""

    def labelled(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(group=frame["group"].map(lambda m: METRIC_LABELS.get(m, m)))

    named = labelled(medians) if medians is not None and not medians.empty else medians
    return distribution(labelled(stats), shape, "Same- vs cross-runbook similarity", "metric", named)


def by_task(
    stats: pd.DataFrame, metric: str, shape: Shape = "box", medians: pd.DataFrame | None = None
) -> Figure:
    """Same vs cross distribution of one metric per task; a box's median marker opens its median pair."""
    return distribution(stats, shape, f"{METRIC_LABELS[metric]} per task", "task", medians)


def by_category(
    stats: pd.DataFrame, metric: str, shape: Shape = "box", medians: pd.DataFrame | None = None
) -> Figure:
    """Same vs cross distribution of one metric per task category; a box's median marker opens its median
    pair."""
    return distribution(stats, shape, f"{METRIC_LABELS[metric]} per category", "category", medians)


def heatmap(pairs: pd.DataFrame, metric: str, task_id: str) -> Figure:
    """Pairwise similarity of one task's trajectories, grouped by runbook (lines between groups), the diagonal
    blank. `pairs`: trajectory_a, trajectory_b, runbook_a, runbook_b, <metric>.

    Cells are square markers at (column, row) positions, not a heatmap trace: plotly selects markers on a click
    (a heatmap trace has no selection). Hover names the row's and column's runbook and trajectory."""
    ends = pd.concat(
        [
            pairs[["trajectory_a", "runbook_a"]].set_axis(["trajectory", "runbook"], axis=1),
            pairs[["trajectory_b", "runbook_b"]].set_axis(["trajectory", "runbook"], axis=1),
        ]
    ).drop_duplicates("trajectory")
    ends["runbook"] = ends["runbook"].astype(object).where(ends["runbook"].notna(), "(unknown)")
    ends = ends.sort_values(["runbook", "trajectory"]).reset_index(drop=True)
    trajectories, runbooks = [str(t) for t in ends["trajectory"]], [str(r) for r in ends["runbook"]]
    pos = {t: i for i, t in enumerate(trajectories)}
    a = [pos[str(t)] for t in pairs["trajectory_a"]]
    b = [pos[str(t)] for t in pairs["trajectory_b"]]
    scores = [round(float(v), 4) for v in pairs[metric]]
    pair_list = [(trajectories[i], trajectories[j]) for i, j in zip(a, b, strict=True)]
    # Both halves: cell (column j, row i) and (i, j) stand for the same pair.
    xs, ys, values = a + b, b + a, scores + scores
    index = list(range(len(pair_list))) * 2
    side = len(trajectories)
    names = [f"{label(r)} · {label(t)}" for r, t in zip(runbooks, trajectories, strict=True)]
    # A cell's hover names its row and column; a heatmap trace could read them off its axes, but plotly selects
    # no heatmap cell on a click, so each cell carries its own (the sample bounds their number).
    hover = [f"row {names[i]}<br>column {names[j]}" for i, j in zip(ys, xs, strict=True)]
    cell = max(HEATMAP_CELL_PX[0], min(HEATMAP_CELL_PX[1], HEATMAP_SIDE_PX // max(1, side)))
    fig = go.Figure(
        go.Scatter(
            x=xs, y=ys, mode="markers", customdata=[[k] for k in index], hovertext=hover,
            marker={"symbol": "square", "size": cell, "color": values, "cmin": 0, "cmax": 1,
                    "colorscale": "Viridis", "colorbar": {"title": {"text": metric}}, "line": {"width": 0}},
            hovertemplate="%{hovertext}<br>" + metric + " %{marker.color:.3f} (click to open)<extra></extra>",
            name=metric,
        )
    )  # fmt: skip
    starts = [k - 0.5 for k in range(1, side) if runbooks[k] != runbooks[k - 1]]
    for s in starts:
        fig.add_vline(x=s, line={"color": "white", "width": 2})
        fig.add_hline(y=s, line={"color": "white", "width": 2})
    axis = {"tickmode": "array", "tickvals": list(range(side)), "ticktext": names, "range": [-0.5, side - 0.5],
            "showgrid": False, "zeroline": False, "title": None, "tickfont": {"size": 10}}  # fmt: skip
    # The plot area is exactly `side` cells wide and high: margins sized to the labels, none left to plotly's
    # automatic margins (which would shrink the area and leave gaps between the cells).
    px = cell * side
    labels = min(HEATMAP_LABEL_PX[1], HEATMAP_LABEL_PX[0] * max(len(n) for n in names) + 16)
    _layout(
        fig, f"{METRIC_LABELS[metric]}: {task_id} by runbook", width=labels + px + 140, height=labels + px + 70,
        xaxis={**axis, "tickangle": -90, "automargin": False},
        yaxis={**axis, "autorange": "reversed", "range": None, "automargin": False},
        hovermode="closest", plot_bgcolor="#f0f2f6", clickmode="event+select",
    )  # fmt: skip
    fig.update_layout(margin={"l": labels, "b": labels, "t": 50, "r": 140})
    return Figure(fig, pair_list, clickable=bool(pair_list))


def coverage_bars(harness: pd.DataFrame, union_solved: int | None = None) -> go.Figure:
    """Per-harness attempted / solved / solved-by-no-other bars side by side, the union solved as a dashed
    line. `harness`: harness, attempted_tasks, solved_tasks, unique_solved (`coverage.harness_frame`)."""
    names = [label(h) for h in harness["harness"]]
    fig = go.Figure(
        [
            go.Bar(x=names, y=harness[column], name=measure, text=harness[column], textposition="outside",
                   hovertemplate="%{x}<br>" + measure + " %{y:,d} tasks<extra></extra>")
            for column, measure in COVERAGE_MEASURES.items()
        ]
    )  # fmt: skip
    if union_solved is not None:
        fig.add_hline(y=union_solved, line={"dash": "dash", "color": "#555867"},
                      annotation_text=f"union solved: {union_solved}", annotation_position="top right")  # fmt: skip
    return _layout(fig, "Coverage per harness", barmode="group", height=380, yaxis={"title": "tasks",
                   **_count_axis(_top(harness[list(COVERAGE_MEASURES)]))})  # fmt: skip


def coverage_upset(upset: pd.DataFrame) -> go.Figure:
    """UpSet-style overlap of solved-task sets: bars of exclusive intersection sizes over a dot matrix.
    `upset`: one boolean column per harness, `harnesses` (label), `tasks` (size) — `coverage.upset_frame`."""
    from plotly.subplots import make_subplots

    names = [c for c in upset.columns if c not in ("harnesses", "degree", "tasks")]
    sets = list(range(len(upset)))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.7, 0.3], vertical_spacing=0.04)
    fig.add_trace(
        go.Bar(x=sets, y=upset["tasks"], text=upset["tasks"], textposition="outside", marker_color="#1f77b4",
               hovertext=[label(h) for h in upset["harnesses"]], showlegend=False,
               hovertemplate="solved by exactly %{hovertext}: %{y:,d} tasks<extra></extra>"),
        row=1, col=1,
    )  # fmt: skip
    for k, name in enumerate(names):
        member = upset[name].astype(bool).tolist()
        fig.add_trace(
            go.Scatter(x=sets, y=[k] * len(sets), mode="markers", showlegend=False, hoverinfo="skip",
                       marker={"size": 12, "color": ["#333333" if m else "#dddddd" for m in member]}),
            row=2, col=1,
        )  # fmt: skip
    fig.update_xaxes(showticklabels=False, showgrid=False)
    fig.update_yaxes(
        title_text="tasks solved by exactly these", **_count_axis(_top(upset[["tasks"]])), row=1, col=1
    )
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(names))), ticktext=[label(n) for n in names],
                     showgrid=False, zeroline=False, row=2, col=1)  # fmt: skip
    return _layout(fig, "Overlap of solved tasks per harness", height=380 + 22 * len(names))


def funnel(frame: pd.DataFrame, expansion_ratio: float | None = None) -> go.Figure:
    """Every stage of the rewrite funnel as horizontal bars in pipeline order, the runbook statuses and the
    executions' outcomes set apart by colour. `frame`: label, group, count (`coverage.funnel_frame`)."""
    order = [str(v) for v in frame["label"]]
    fig = go.Figure(
        [
            go.Bar(y=part["label"].astype(str), x=part["count"], orientation="h", name=group, text=part["count"],
                   textposition="outside", marker_color=FUNNEL_COLORS.get(str(group)),
                   hovertemplate="%{y}: %{x:,d}<extra></extra>")
            for group, part in frame.groupby("group", sort=False)
        ]
    )  # fmt: skip
    title = "Rewrite funnel" + (
        f" (expansion ratio {expansion_ratio:.2f})" if expansion_ratio is not None else ""
    )
    fig.update_yaxes(categoryorder="array", categoryarray=order[::-1], title=None)
    return _layout(
        fig,
        title,
        height=120 + 26 * len(order),
        xaxis={"title": "count", **_count_axis(_top(frame[["count"]]))},
    )
