"""Runbooks: the review queue by status with progress, "next pending", bulk approve/reject, and one runbook's
rounds, flags, reviews and provenance."""

import streamlit as st

from rsr_core.ui.runbook_views import STATUSES, progress_bars, queue, review_form, runbook_detail
from rsr_core.ui.widgets import app_services, md_escape, require_data, scripted_banner

st.title("Runbooks")
ctx = app_services()
if require_data(ctx):
    scripted_banner(ctx)
    all_rbs = queue(ctx)
    if all_rbs.empty:
        st.info("No runbooks yet: run a rewrite job (Rewrite page or `rsr rewrite`).")
        st.stop()
    if "review_done" in st.session_state:
        st.success(md_escape(st.session_state.pop("review_done")))
    progress_bars(ctx)
    counts = all_rbs["status"].value_counts().to_dict()
    c = st.columns([2, 2, 1])
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
    rows = queue(ctx, status, task)
    pending = list(all_rbs.loc[all_rbs["status"] == "pending_review", "runbook_id"])
    focus = st.session_state.get("rb_next") or st.query_params.get("runbook")
    if c[2].button(f"next pending ({len(pending)})", key="rb_next_btn", disabled=not pending):
        after = [r for r in pending if focus is None or r > focus]
        st.session_state["rb_next"] = (after or pending)[0]
        st.session_state.pop("rb_focus", None)
        st.rerun()
    event = st.dataframe(rows, hide_index=True, on_select="rerun", selection_mode="multi-row", key="rb_table")
    selected = [rows.iloc[i]["runbook_id"] for i in event.selection.rows] if event else []
    with st.expander(f"bulk review of the selection ({len(selected)} selected)", expanded=bool(selected)):
        review_form(ctx, selected, key="bulk")
    if len(selected) == 1:
        focus = selected[0]
    options = list(rows["runbook_id"])
    if focus is not None and focus not in options:
        options = [focus, *options]
    if options:
        chosen = st.selectbox(
            "runbook", options, index=options.index(focus) if focus in options else 0, key="rb_focus"
        )
        st.session_state["rb_next"] = chosen
        runbook_detail(ctx, chosen)
