"""Runbooks: the review queue by status, bulk approve/reject, and one runbook's rounds, flags and provenance."""

import streamlit as st

from rsr_core.store import app_queries
from rsr_core.ui.runbook_views import STATUSES, review_form, runbook_detail
from rsr_core.ui.widgets import app_services, require_data

st.title("Runbooks")
ctx = app_services()
if require_data(ctx):
    cur = ctx.store.cursor()
    all_rbs = app_queries.runbook_queue(cur)
    if all_rbs.empty:
        st.info("No runbooks yet: run a rewrite job (Rewrite page or `rsr rewrite`).")
        st.stop()
    counts = all_rbs["status"].value_counts().to_dict()
    c = st.columns(2)
    status = c[0].selectbox(
        "status",
        [None, *STATUSES],
        key="rb_status",
        format_func=lambda s: "all" if s is None else f"{s} ({counts.get(s, 0)})",
    )
    task = c[1].selectbox(
        "task",
        [None, *sorted(all_rbs["task_id"].unique())],
        key="rb_task",
        format_func=lambda t: "all tasks" if t is None else t,
    )
    queue = app_queries.runbook_queue(cur, status, task)
    event = st.dataframe(
        queue, hide_index=True, on_select="rerun", selection_mode="multi-row", key="rb_table"
    )
    selected = [queue.iloc[i]["runbook_id"] for i in event.selection.rows] if event else []
    with st.expander(f"bulk review of the selection ({len(selected)} selected)", expanded=bool(selected)):
        review_form(ctx, selected, key="bulk")
    focus = st.query_params.get("runbook") or (selected[0] if len(selected) == 1 else None)
    options = (
        list(queue["runbook_id"])
        if focus is None or focus in set(queue["runbook_id"])
        else [focus, *queue["runbook_id"]]
    )
    if options:
        chosen = st.selectbox(
            "runbook", options, index=options.index(focus) if focus in options else 0, key="rb_focus"
        )
        runbook_detail(ctx, chosen)
