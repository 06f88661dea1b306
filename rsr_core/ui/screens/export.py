"""Export: filters, exactly what the write would produce (rows, duplicates, everything left out and why),
then write and download."""

import streamlit as st

from rsr_core.export.models import FORMATS, ExportFilters, as_format
from rsr_core.export.service import export
from rsr_core.outputs import OutputError
from rsr_core.ui.export_views import archive_bytes, default_out, left_out_frame, plan_of, task_ids
from rsr_core.ui.figures import figures
from rsr_core.ui.grid import table
from rsr_core.ui.widgets import app_services, md_escape, require_data, scripted_banner


def show_preview(ctx, filters: ExportFilters) -> bool:
    """Exactly what the write would produce (counted in the background); True when it is of the data as it is
    now."""
    plan, current, error = plan_of(ctx, filters)
    if error:
        st.error(md_escape(f"counting failed: {error}"))
    if plan is None:
        st.info("counting exactly what the export would write…")
        return current
    if not current and not error:
        st.caption("counted before the latest change of the data; counting again…")
    figures(
        {
            "selected": plan.selected,
            "would be exported": plan.exported,
            "exact duplicates dropped": plan.duplicates,
            "left out": plan.left_out.total,
        },
        key="ex_figures",
    )
    table(left_out_frame(plan), key="left_out")
    return current


@st.fragment(run_every=2.0)
def poll_preview(ctx, filters: ExportFilters) -> None:
    """The preview, redrawn every two seconds while it is being counted (a count the page does not see finish
    within `export_views.WAIT_S` may build rows the store holds no key for, which takes long); the page reruns
    once it is done."""
    if show_preview(ctx, filters):
        st.rerun()


st.title("Export for fine-tuning")
ctx = app_services()
if require_data(ctx):
    scripted_banner(ctx)
    c = st.columns(3)
    kinds = c[0].multiselect(
        "kinds", ["rewrite", "discovery", "eval"], ["rewrite", "discovery"], key="ex_kinds"
    )
    # Up to thousands of task ids: in a popover, whose list the browser draws only when it is opened.
    chosen = len(st.session_state.get("ex_tasks") or [])
    with c[1].popover(f"tasks: {chosen or 'all'}" + (" chosen" if chosen else ""), width="stretch"):
        tasks = st.multiselect("tasks (none: all)", task_ids(ctx), key="ex_tasks")
    fmt = as_format(c[2].selectbox("format", FORMATS, key="ex_format"))
    d = st.columns(3)
    direct = d[0].checkbox("include terminus-2 discovery successes unchanged", True, key="ex_direct")
    scripted = d[1].checkbox("include runs of the scripted demo model", False, key="ex_scripted")
    everything = d[2].checkbox("all trajectories, training filters off (archive)", False, key="ex_all")
    filters = ExportFilters(
        kinds=kinds or None,
        task_ids=tasks,
        include_direct_terminus=direct,
        all_trajectories=everything,
        include_scripted=scripted,
    )
    if plan_of(ctx, filters)[1]:
        show_preview(ctx, filters)
    else:
        poll_preview(ctx, filters)
    out = st.text_input("write to", default_out(fmt), key=f"ex_out_{fmt}")
    force = st.checkbox("replace it if it exists (an earlier output)", False, key="ex_force")
    if st.button("write the export", type="primary", key="ex_write"):
        try:
            summary = export(ctx.store, fmt, out, filters, force=force)
        except OutputError as exc:
            st.error(md_escape(str(exc)))
        else:
            st.success(
                md_escape(
                    f"{summary.exported} rows written to {summary.out} ({summary.duplicates} duplicates dropped); "
                    f"dataset card: {summary.card}"
                )
            )
            st.session_state["ex_last"] = (summary.out, summary.card)
    if st.session_state.get("ex_last"):
        name, data = archive_bytes(*st.session_state["ex_last"])
        st.download_button(
            "download the last export (with its dataset card)", data, file_name=name, key="ex_download"
        )
