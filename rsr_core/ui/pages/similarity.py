"""Similarity: same- vs cross-runbook command similarity of passed rewrites, per metric, task and category."""

import streamlit as st

from rsr_core import charts
from rsr_core.analysis.similarity import METRICS
from rsr_core.ui.analysis_data import DISPLAY_PAIRS, all_metrics, display_sample, pairs_for, summary_for
from rsr_core.ui.widgets import app_services, require_data, scripted_banner, summary

st.title("Command similarity of rewrites")
st.caption(
    "All unordered pairs of passed rewrite trajectories of the same task; a pair is same-runbook when both "
    "come from one runbook. Confidence intervals: 95% percentile bootstrap over pairs."
)
ctx = app_services()
if require_data(ctx):
    scripted_banner(ctx)
    db, n = ctx.settings.db_path, summary(ctx)["trajectories"]["rewrite"]
    base = pairs_for(db, n, "exact")
    if base.empty:
        st.info("No pairs yet: similarity needs at least two passed rewrites of a task.")
        st.stop()
    c = st.columns([3, 1])
    default = list(METRICS) if len(base) <= DISPLAY_PAIRS else ["exact"]
    chosen = c[0].multiselect("metrics", list(METRICS), default, key="sim_metrics") or ["exact"]
    shape = c[1].radio("shape", ["box", "violin"], horizontal=True, key="sim_shape")
    pairs = all_metrics(db, n, tuple(chosen))
    sample = display_sample(pairs)
    if len(sample) < len(pairs):
        st.caption(
            f"{len(pairs):,} pairs; the distributions show a seeded sample of {len(sample):,}, the table "
            "uses every pair."
        )
    st.plotly_chart(charts.similarity_by_metric(sample, chosen, shape=shape), key="by_metric")
    st.dataframe(summary_for(db, n, tuple(chosen)), hide_index=True, key="sim_summary")
    metric = st.selectbox("metric for the per-task and per-category views", chosen, key="sim_metric")
    counts = pairs["task_id"].value_counts()
    tasks = st.multiselect("tasks", list(counts.index), list(counts.index[:20]), key="sim_tasks")
    left, right = st.columns(2)
    left.plotly_chart(
        charts.similarity_by_task(display_sample(pairs[pairs["task_id"].isin(tasks)]), metric, shape=shape),
        key="by_task",
    )
    right.plotly_chart(charts.similarity_by_category(sample, metric, shape=shape), key="by_category")
    task = st.selectbox(
        "pairwise heatmap of one task, grouped by runbook", sorted(counts.index), key="sim_task"
    )
    st.plotly_chart(charts.pair_heatmap(pairs, metric, task), key="heatmap")
