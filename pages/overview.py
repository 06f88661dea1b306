"""Overview: counts by kind and harness, coverage and its overlap, the rewrite funnel, pass rates."""

import streamlit as st

from rsr_core import charts
from rsr_core.analysis.coverage import funnel_frame, harness_frame, upset_frame
from rsr_core.store import analysis_queries, app_queries
from rsr_core.ui.widgets import app_services, require_data

st.title("RSR Studio")
ctx = app_services()
if require_data(ctx):
    cur = ctx.store.cursor()
    summary = ctx.store.summary()
    cols = st.columns(5)
    cols[0].metric("tasks", summary["tasks"])
    for col, kind in zip(cols[1:4], ("discovery", "rewrite", "eval"), strict=True):
        col.metric(f"{kind} trajectories", summary["trajectories"][kind])
    cols[4].metric("steps", f"{summary['steps']:,}")

    st.subheader("Coverage of the discovery harnesses")
    coverage = ctx.store.coverage()
    if coverage["harnesses"]:
        gain = coverage["gain_over_best"]
        st.caption(
            f"union of solved tasks: {coverage['union_solved']} · best single harness: "
            f"{coverage['best_single']['harness']} ({coverage['best_single']['solved_tasks']}) · gain over "
            f"the best single harness: {'n/a' if gain is None else f'{gain:+.1%}'}"
        )
        left, right = st.columns(2)
        left.plotly_chart(
            charts.coverage_bars(harness_frame(coverage), coverage["union_solved"]), key="coverage_bars"
        )
        right.plotly_chart(
            charts.coverage_upset(upset_frame(analysis_queries.discovery_outcomes(cur))), key="coverage_upset"
        )
        st.dataframe(harness_frame(coverage), hide_index=True, key="coverage_table")
    else:
        st.info("No discovery trajectories yet: run `rsr discover` or ingest discovery runs.")

    st.subheader("Rewrite funnel")
    funnel = analysis_queries.funnel(cur)
    if funnel["runbooks"] or funnel["executions"]:
        st.plotly_chart(charts.funnel_chart(funnel_frame(funnel), funnel["expansion_ratio"]), key="funnel")
    else:
        st.info("No rewrite jobs yet: start one on the Rewrite page or with `rsr rewrite`.")

    st.subheader("Trajectories and pass rates by kind and harness")
    st.dataframe(app_queries.counts_by_kind_harness(cur), hide_index=True, key="kind_harness")
