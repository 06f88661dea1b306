"""Runbooks: the review queue by status with progress, "next pending", bulk approve/reject of ticked rounds, and
the round opened from the queue: its lineage's rounds, flags, reviews and provenance."""

import streamlit as st

from rsr_core.ui.data import prefetch
from rsr_core.ui.grid import grid
from rsr_core.ui.runbook_views import (
    FOCUS,
    QUEUE,
    STATUSES,
    dossier,
    next_pending,
    open_round,
    progress_bars,
    queue,
    queue_rows,
    record_submitted,
    review_form,
    runbook_detail,
)
from rsr_core.ui.widgets import (
    app_services,
    md_escape,
    page_number,
    require_data,
    scripted_banner,
    select_in_popover,
)

QUEUE_ROWS = 50  # rounds drawn per page of the queue (the queue itself may hold thousands)
QUEUE_COLUMNS = ["runbook_id", "status", "task_id", "variant", "round", "critic_verdict", "flags", "review",
                 "last_reviewer", "reviews"]  # fmt: skip

st.title("Runbooks")
ctx = app_services()
record_submitted(ctx)  # a decision the review form just sent, before anything is read
if require_data(ctx):
    scripted_banner(ctx)
    all_rbs = queue(ctx)
    if all_rbs.empty:
        st.info("No runbooks yet: run a rewrite job (Rewrite page or `rsr rewrite`).")
        st.stop()
    # Always one element here, empty or not: a notice inserted above the page would move every element below
    # to a new place, and the browser would draw them all anew.
    notice = st.empty()
    if "review_done" in st.session_state:
        notice.success(md_escape(st.session_state.pop("review_done")))
    progress_bars(ctx, all_rbs)
    counts = all_rbs["status"].value_counts().to_dict()
    c = st.columns([2, 2, 1], vertical_alignment="bottom")
    status = select_in_popover(
        c[0],
        "status",
        [None, *STATUSES],
        "rb_status",
        format_func=lambda s: "all" if s is None else f"{s} ({counts.get(s, 0)})",
    )
    task = select_in_popover(
        c[1],
        "task",
        [None, *sorted(all_rbs["task_id"].unique())],
        "rb_task",
        format_func=lambda t: "all tasks" if t is None else t,
    )
    rows = queue_rows(all_rbs, status, task)
    pending = list(all_rbs.loc[all_rbs["status"] == "pending_review", "runbook_id"])
    if c[2].button(f"next pending ({len(pending)})", key="rb_next_btn", disabled=not pending):
        current = st.session_state.get(FOCUS) or st.query_params.get("runbook")
        st.session_state[FOCUS] = next_pending(pending, current)
    page = page_number(st, "queue page", len(rows), QUEUE_ROWS, f"{len(rows):,} rounds", "rb_page")
    shown = rows.iloc[(page - 1) * QUEUE_ROWS : page * QUEUE_ROWS].reset_index(drop=True)
    # Source, job and time are in the runbook's provenance below. A round's id opens it below; its checkbox
    # chooses it for a bulk review (kept across queue pages).
    ticked = grid(
        shown[QUEUE_COLUMNS],
        key=QUEUE,
        row_key="runbook_id",
        select="multi",
        height=420,
        wrap=("flags",),
        open_column="runbook_id",
        on_open=open_round,
    )
    # A popover: its widgets are drawn in the browser only when it is opened.
    with st.popover(f"bulk review ({len(ticked)} ticked)"):
        review_form(ticked, key="bulk")
    focus = (
        st.session_state.get(FOCUS) or st.query_params.get("runbook") or next(iter(shown["runbook_id"]), None)
    )
    if focus is not None:
        st.session_state[FOCUS] = focus
        runbook_detail(ctx, focus)
        if (ahead := next_pending(pending, focus)) not in (None, focus):
            prefetch(dossier, ctx, ahead)  # what "next pending" opens, read while this round is looked at
