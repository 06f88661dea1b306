"""Overview: counts, coverage per harness and its overlap, the rewrite funnel at every stage, pass rates."""

import streamlit as st

from rsr_core.ui.figures import figures
from rsr_core.ui.grid import table
from rsr_core.ui.overview_data import overview_charts, overview_figures
from rsr_core.ui.plot_view import draw
from rsr_core.ui.widgets import app_services, require_data, scripted_banner, summary

st.title("RSR Studio")
ctx = app_services()
if require_data(ctx):
    scripted_banner(ctx)
    counts = summary(ctx)
    trajectories = {
        f"{kind} trajectories": counts["trajectories"][kind] for kind in ("discovery", "rewrite", "eval")
    }
    figures({"tasks": counts["tasks"], **trajectories, "steps": counts["steps"]}, key="ov_counts")
    fig = overview_figures(ctx)
    coverage = fig["coverage"]
    drawn = overview_charts(fig)

    st.subheader("Coverage of the discovery harnesses")
    if coverage["harnesses"]:
        gain = coverage["gain_over_best"]
        st.caption(
            f"union of solved tasks: {coverage['union_solved']} · best single harness: "
            f"{coverage['best_single']['harness']} ({coverage['best_single']['solved_tasks']}) · gain over "
            f"the best single harness: {'n/a' if gain is None else f'{gain:+.1%}'} · a run that tampered with "
            "the verifier never counts as solved"
        )
        left, right = st.columns(2)
        with left:
            draw(drawn["coverage_bars"], key="ov_coverage_bars")
        with right:
            draw(drawn["coverage_upset"], key="ov_coverage_upset")
        table(fig["harness"], key="ov_harness")
    else:
        st.info("No discovery trajectories yet: run `rsr discover` or ingest discovery runs.")

    st.subheader("Rewrite funnel")
    funnel = fig["funnel"]
    if funnel["runbooks"] or funnel["executions"]:
        draw(drawn["funnel"], key="ov_funnel")
    else:
        st.info("No rewrite jobs yet: start one on the Rewrite page or with `rsr rewrite`.")

    st.subheader("Trajectories and pass rates by kind and harness")
    table(fig["kind_harness"], key="ov_kind_harness")
