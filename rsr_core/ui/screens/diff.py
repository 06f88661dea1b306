"""Diff: a source's commands against one of its rewrites, aligned, with the pair's overlap figures and, for a
rewrite that is not kept, why."""

import streamlit as st

from rsr_core.ui.diff_data import DIFF_ROWS, diff_of, rewrites_of, sources
from rsr_core.ui.figures import figures
from rsr_core.ui.grid import table
from rsr_core.ui.trajectory_views import not_kept_reasons
from rsr_core.ui.views import diff_counts, diff_frame
from rsr_core.ui.widgets import (
    app_services,
    md_escape,
    page_link,
    page_number,
    require_data,
    scripted_banner,
    select_in_popover,
)

st.title("Command diff: source vs rewrite")
ctx = app_services()
if require_data(ctx):
    scripted_banner(ctx)
    found = sources(ctx)
    if found.empty:
        st.info("No rewrites yet: run a rewrite job (Rewrite page or `rsr rewrite`).")
        st.stop()
    labels: dict[str, str] = {
        str(r.trajectory_id): f"{r.task_id} · {r.harness} · {r.trajectory_id} ({r.rewrites} rewrites)"
        for r in found.itertuples()
    }
    # Hundreds of sources: in a popover, whose list the browser draws only when it is opened.
    source_id = select_in_popover(
        st, "source trajectory", list(labels), "diff_source", format_func=labels.__getitem__, name="source"
    )
    rewrites = rewrites_of(ctx, source_id)
    rlabels = {
        r["trajectory_id"]: f"{r['trajectory_id']} · runbook {r['runbook_id']} · reward {r['reward']} · "
        f"{'kept' if r['kept'] else 'not kept'}"
        for r in rewrites
    }
    rewrite_id = select_in_popover(
        st,
        f"rewrite ({len(rlabels)} of this source)",
        list(rlabels),
        "diff_rewrite",
        format_func=rlabels.__getitem__,
        name="rewrite",
    )
    status = next(r for r in rewrites if r["trajectory_id"] == rewrite_id)
    if status["kept"]:
        st.success("kept for training")
    else:
        st.warning(md_escape("not kept: " + "; ".join(not_kept_reasons(status))))
    rows, overlap = diff_of(ctx, source_id, rewrite_id)
    figures({f"{metric} overlap": f"{value:.3f}" for metric, value in overlap.items()}, key="diff_figures")
    counts = diff_counts(rows)
    st.caption(
        f"{counts['equal']} equal · {counts['delete']} only in the source (red) · {counts['insert']} only in "
        f"the rewrite (green) · {counts['replace']} changed (yellow)"
    )
    page = page_number(st, "rows page", len(rows), DIFF_ROWS, f"{len(rows)} rows", "diff_page")
    frame = diff_frame(rows[(page - 1) * DIFF_ROWS : page * DIFF_ROWS])
    table(
        frame,
        key="diff_rows",
        tones=list(frame["op"]),
        wrap=("source", "rewrite"),
        mono=("source", "rewrite"),
    )
    page_link("open both side by side", "trajectories", compare=f"{source_id},{rewrite_id}")
