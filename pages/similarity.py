"""Similarity: same- vs cross-runbook command similarity of passed rewrites, per metric, task and category."""

import streamlit as st

from rsr_core import charts
from rsr_core.analysis.similarity import METRICS, summary_frame
from rsr_core.ui.analysis_data import similarity_pairs
from rsr_core.ui.widgets import app_services, require_data

st.title("Command similarity of rewrites")
st.caption(
    "All unordered pairs of passed rewrite trajectories of the same task; a pair is same-runbook when both "
    "come from one runbook. Confidence intervals: 95% percentile bootstrap over pairs."
)
ctx = app_services()
if require_data(ctx):
    pairs = similarity_pairs(ctx.settings.db_path, ctx.store.summary()["trajectories"]["rewrite"])
    if pairs.empty:
        st.info("No pairs yet: similarity needs at least two passed rewrites of a task.")
        st.stop()
    c = st.columns(2)
    metric = c[0].selectbox("metric", list(METRICS), key="sim_metric")
    shape = c[1].radio("shape", ["box", "violin"], horizontal=True, key="sim_shape")
    st.plotly_chart(charts.similarity_by_metric(pairs, shape=shape), key="by_metric")
    summary = summary_frame(pairs)
    st.dataframe(summary, hide_index=True, key="sim_summary")
    left, right = st.columns(2)
    left.plotly_chart(charts.similarity_by_task(pairs, metric, shape=shape), key="by_task")
    right.plotly_chart(charts.similarity_by_category(pairs, metric, shape=shape), key="by_category")
    task = st.selectbox(
        "pairwise heatmap of one task, grouped by runbook", sorted(pairs["task_id"].unique()), key="sim_task"
    )
    st.plotly_chart(charts.pair_heatmap(pairs, metric, task), key="heatmap")
