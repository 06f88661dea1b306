"""Export: filters, a preview of what trains and what is left out (and why), then write and download."""

import streamlit as st

from rsr_core.export.models import FORMATS, ExportFilters
from rsr_core.export.service import export, preview
from rsr_core.store import app_queries
from rsr_core.ui.export_views import archive_bytes, default_out, left_out_frame
from rsr_core.ui.widgets import app_services, md_escape, require_data

st.title("Export for fine-tuning")
ctx = app_services()
if require_data(ctx):
    c = st.columns(3)
    kinds = c[0].multiselect(
        "kinds", ["rewrite", "discovery", "eval"], ["rewrite", "discovery"], key="ex_kinds"
    )
    tasks = c[1].multiselect(
        "tasks (none: all)", app_queries.facet_values(ctx.store.cursor())["task_id"], key="ex_tasks"
    )
    fmt = c[2].selectbox("format", FORMATS, key="ex_format")
    d = st.columns(2)
    direct = d[0].checkbox("include terminus-2 discovery successes unchanged", True, key="ex_direct")
    everything = d[1].checkbox("all trajectories, training filters off (archive)", False, key="ex_all")
    filters = ExportFilters(
        kinds=kinds or None, task_ids=tasks, include_direct_terminus=direct, all_trajectories=everything
    )
    plan = preview(ctx.store, filters)
    m = st.columns(3)
    m[0].metric("selected", plan.selected)
    m[1].metric("would be exported", plan.eligible)
    m[2].metric("left out", plan.left_out.total)
    st.dataframe(left_out_frame(plan), hide_index=True, key="ex_left_out")
    out = st.text_input("write to", default_out(fmt), key=f"ex_out_{fmt}")
    if st.button("write the export", type="primary", key="ex_write"):
        try:
            summary = export(ctx.store, fmt, out, filters)
        except Exception as exc:  # noqa: BLE001 - shown to the user as is
            st.error(md_escape(str(exc)))
        else:
            st.success(
                md_escape(
                    f"{summary.exported} rows written to {summary.out} ({summary.duplicates} duplicates dropped); "
                    f"dataset card: {summary.card}"
                )
            )
            st.session_state["ex_last"] = summary.out
    if st.session_state.get("ex_last"):
        name, data = archive_bytes(st.session_state["ex_last"])
        st.download_button(
            "download the last export (with its dataset card)", data, file_name=name, key="ex_download"
        )
