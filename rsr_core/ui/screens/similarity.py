"""Similarity: same- vs cross-runbook command similarity of passed rewrites, per metric, task and category, from
the stored pair scores (summarised before they are drawn)."""

import streamlit as st

from rsr_core.analysis.pair_metrics import METRICS
from rsr_core.ui import analysis_data as sim
from rsr_core.ui import plots
from rsr_core.ui.grid import table
from rsr_core.ui.plot_view import draw_opening_pairs
from rsr_core.ui.widgets import app_services, md_escape, require_data, scripted_banner, select_in_popover

VIEWS = ("by metric", "per task", "per category", "pairwise heatmap of one task")
HOVER_HINT = "Hover a box for its figures and its median pair; click its median line to open that pair."


@st.fragment(run_every=1.0)
def refresh_progress(ctx) -> None:
    """Progress of the background scoring; the page reruns when it is done."""
    job = sim.refresh_job(ctx)
    if job.error:
        st.error(md_escape(f"scoring failed: {job.error}"))
    elif job.running:
        share = job.done / job.total if job.total else 0.0
        st.progress(share, text=f"scoring the pairs of the tasks whose rewrites changed: batch {job.done} of "
                    f"{job.total or '?'}")  # fmt: skip
    else:
        st.rerun()


st.title("Command similarity of rewrites")
st.caption(
    "All unordered pairs of passed rewrite trajectories of the same task; a pair is same-runbook when both "
    "come from one runbook. Confidence intervals: 95% percentile bootstrap over pairs. Scores are computed "
    "once per change of the data and stored."
)
ctx = app_services()
if require_data(ctx):
    scripted_banner(ctx)
    state = sim.state(ctx)
    if not state["current"]:
        st.info(f"{state['stale']} task(s) have new or changed passed rewrites: scoring them now.")
        sim.background_refresh(ctx)
        refresh_progress(ctx)
        st.stop()
    if not state["pairs"]:
        st.info("No pairs yet: similarity needs at least two passed rewrites of a task.")
        st.stop()
    c = st.columns([3, 1])
    chosen = c[0].multiselect("metrics", list(METRICS), list(METRICS), key="sim_metrics") or ["exact"]
    picked = c[1].radio("shape", ["box", "violin"], horizontal=True, key="sim_shape")
    shape: plots.Shape = "violin" if picked == "violin" else "box"
    st.caption(f"{state['pairs']:,} pairs of {state['tasks']:,} tasks; the charts draw their summaries.")
    table(sim.summary_table(ctx, tuple(chosen)), key="sim_summary")
    # One chart at a time: drawing charts is most of what this page costs in the browser.
    view = st.radio("view", VIEWS, horizontal=True, key="sim_view")
    if view == VIEWS[0]:
        medians = sim.metric_median_pairs(ctx, tuple(chosen)) if shape == "box" else None
        if shape == "box":
            st.caption(HOVER_HINT)
        figure = plots.by_metric(sim.metric_stats(ctx, tuple(chosen)), shape, medians)
        draw_opening_pairs(figure, key="sim_chart_metric")
        st.stop()
    metric = st.selectbox("metric", chosen, key="sim_metric")
    counts = sim.task_pairs(ctx)
    ids = list(counts["task_id"])
    if view == VIEWS[1]:
        # Hundreds of task ids: in a popover, whose list the browser draws only when it is opened.
        shown = len(st.session_state.get("sim_tasks", ids[:20]))
        with st.popover(f"tasks: {shown} of {len(ids):,} shown"):
            tasks = st.multiselect("tasks", ids, ids[:20], key="sim_tasks")
        stats = sim.grouped_stats(ctx, metric, "task_id", tuple(tasks))
        medians = sim.median_pairs(ctx, metric, tuple(tasks)) if shape == "box" else None
        if shape == "box":
            st.caption(HOVER_HINT)
        draw_opening_pairs(plots.by_task(stats, metric, shape, medians), key="sim_chart_task")
    elif view == VIEWS[2]:
        stats = sim.grouped_stats(ctx, metric, "category")
        medians = sim.category_median_pairs(ctx, metric) if shape == "box" else None
        if shape == "box":
            st.caption(HOVER_HINT)
        draw_opening_pairs(plots.by_category(stats, metric, shape, medians), key="sim_chart_category")
    else:
        task = select_in_popover(
            st, "task (its pairs grouped by runbook)", sorted(ids), "sim_task", name="task", width="content"
        )
        pairs, size = sim.heatmap_pairs(ctx, task, metric)
        if size > sim.HEATMAP_TRAJECTORIES:
            st.caption(
                f"{size} trajectories: the heatmap shows a seeded sample of {sim.HEATMAP_TRAJECTORIES}."
            )
        st.caption("Hover a cell for its pair and score; click it to open the pair side by side.")
        draw_opening_pairs(plots.heatmap(pairs, metric, task), key="sim_chart_heatmap", width="content")
