"""Diff: a source's commands against one of its rewrites, aligned, with the pair's overlap figures."""

import streamlit as st

from rsr_core.store import app_queries
from rsr_core.ui.views import command_diff, diff_counts, diff_frame, pair_figures
from rsr_core.ui.widgets import app_services, page_link, require_data

COLOURS = {
    "equal": "",
    "delete": "background-color: #fde2e1",
    "insert": "background-color: #dcf5e3",
    "replace": "background-color: #fff3c4",
}

st.title("Command diff: source vs rewrite")
ctx = app_services()
if require_data(ctx):
    cur = ctx.store.cursor()
    sources = app_queries.sources_with_rewrites(cur)
    if sources.empty:
        st.info("No rewrites yet: run a rewrite job (Rewrite page or `rsr rewrite`).")
        st.stop()
    labels = {
        r.trajectory_id: f"{r.task_id} · {r.harness} · {r.trajectory_id} ({r.rewrites} rewrites)"
        for r in sources.itertuples()
    }
    source_id = st.selectbox("source trajectory", list(labels), format_func=labels.get, key="diff_source")
    rewrites = app_queries.rewrites_with_status(cur, "source_trajectory_id", source_id)
    rlabels = {
        r.trajectory_id: f"{r.trajectory_id} · runbook {r.runbook_id} · reward {r.reward} · "
        f"{'kept' if r.kept else 'not kept'}"
        for r in rewrites.itertuples()
    }
    rewrite_id = st.selectbox(
        f"rewrite ({len(rlabels)} of this source)", list(rlabels), format_func=rlabels.get, key="diff_rewrite"
    )
    source_cmds, rewrite_cmds = ctx.store.commands(source_id), ctx.store.commands(rewrite_id)
    rows = command_diff(source_cmds, rewrite_cmds)
    figures = pair_figures(source_cmds, rewrite_cmds)
    cols = st.columns(len(figures))
    for col, (metric, value) in zip(cols, figures.items(), strict=True):
        col.metric(f"{metric} overlap", f"{value:.3f}")
    counts = diff_counts(rows)
    st.caption(
        f"{counts['equal']} equal · {counts['delete']} only in the source (red) · {counts['insert']} only in "
        f"the rewrite (green) · {counts['replace']} changed (yellow)"
    )
    frame = diff_frame(rows)
    st.dataframe(
        frame.style.apply(lambda row: [COLOURS[row["op"]]] * len(row), axis=1),
        hide_index=True,
        width="stretch",
        key="diff_table",
    )
    page_link("open both side by side", "trajectories", compare=f"{source_id},{rewrite_id}")
