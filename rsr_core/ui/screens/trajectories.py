"""Trajectories: filtered list with search, one trajectory step by step, two side by side.

Deep links: ?trajectory=ID&step=N opens that step; ?compare=A,B opens the side-by-side view.
"""

import streamlit as st

from rsr_core.ui.trajectory_views import side_by_side, trajectory_detail, trajectory_list
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
        ids = [x for x in params["compare"].split(",") if x]
        if len(ids) == 2:
            side_by_side(ctx, ids[0], ids[1])
        else:
            st.error("?compare= needs two trajectory ids separated by a comma")
    elif "trajectory" in params:
        step = params.get("step")
        if step is not None and not step.isdigit():
            st.error(md_escape(f"?step= must be a step number, got {step!r}"))
        else:
            trajectory_detail(ctx, params["trajectory"], int(step) if step else None)
    else:
        trajectory_list(ctx)
