"""Trajectories: filtered list with search, one trajectory step by step, two side by side.

Deep links: ?trajectory=ID&step=N opens that step; ?compare=A&compare=B (or ?compare=A,B for ids without a
comma) opens the side-by-side view.
"""

import streamlit as st

from rsr_core.ui.trajectory_views import (
    compared_ids,
    side_by_side,
    step_number,
    trajectory_detail,
    trajectory_list,
)
from rsr_core.ui.widgets import app_services, md_escape, require_data, scripted_banner

ctx = app_services()
params = st.query_params
st.title("Trajectories")
if require_data(ctx):
    scripted_banner(ctx)
    if ("compare" in params or "trajectory" in params) and st.button("back to the list", key="back"):
        st.query_params.clear()
        st.rerun()
    if "compare" in params:
        ids = compared_ids(params.get_all("compare"))
        if ids is not None:
            side_by_side(ctx, *ids)
        else:
            st.error("?compare= needs two trajectory ids: ?compare=A&compare=B, or ?compare=A,B")
    elif "trajectory" in params:
        step = params.get("step")
        if step is not None and step_number(step) is None:
            st.error(md_escape(f"?step= must be a step number (1 to 999,999,999), got {step[:80]!r}"))
        else:
            trajectory_detail(ctx, params["trajectory"], step_number(step) if step else None)
    else:
        trajectory_list(ctx)
