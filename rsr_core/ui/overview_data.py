"""The Overview page's figures, cached until the data changes (one read of the store per change)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from rsr_core.analysis.coverage import funnel_frame, harness_frame, upset_frame
from rsr_core.store import analysis_queries, app_queries, pipeline, queries
from rsr_core.ui.data import Cursor, cached


@cached
def overview_figures(cur: Cursor) -> dict[str, Any]:
    """Coverage (with its frames), the funnel and the counts by kind and harness, in one use of the store."""
    coverage = queries.coverage(cur)
    funnel = pipeline.funnel(cur)
    return {
        "coverage": coverage,
        "harness": harness_frame(coverage),
        "upset": upset_frame(analysis_queries.discovery_outcomes(cur)),
        "funnel": funnel,
        "funnel_frame": funnel_frame(funnel),
        "kind_harness": app_queries.counts_by_kind_harness(cur),
    }


def overview_charts(fig: dict[str, Any]) -> dict[str, Any]:
    """The Overview's charts, built once per content of their data (a commit that does not change coverage or
    the funnel, such as a new eval run, rebuilds nothing)."""
    coverage, funnel = fig["coverage"], fig["funnel"]
    out = {}
    if coverage["harnesses"]:
        out["coverage_bars"] = _chart("coverage_bars", fig["harness"], coverage["union_solved"])
        out["coverage_upset"] = _chart("coverage_upset", fig["upset"])
    if funnel["runbooks"] or funnel["executions"]:
        out["funnel"] = _chart("funnel", fig["funnel_frame"], funnel["expansion_ratio"])
    return out


@st.cache_resource(show_spinner=False, max_entries=12)
def _chart(builder: str, *data: Any) -> Any:
    """One plotly figure of `rsr_core.ui.plots`, keyed by the content of its (small) data frames."""
    from rsr_core.ui import plots

    return getattr(plots, builder)(*data)
