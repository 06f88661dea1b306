"""The Overview page's figures, cached until the data changes (one read of the store per change)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from rsr_core.analysis.coverage import funnel_frame, harness_frame, upset_frame
from rsr_core.store import analysis_queries, app_queries, pipeline, queries
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cursor, cached, db_signature


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


def overview_charts(ctx: AppServices, fig: dict[str, Any]) -> dict[str, Any]:
    """The Overview's three plotly figures, built once per database state (validating a figure costs tens of ms,
    and every session sees the same ones)."""
    path = ctx.settings.db_path
    return _charts(path, db_signature(path), fig)


@st.cache_resource(show_spinner=False, max_entries=4)
def _charts(db_path: str, signature: tuple, _fig: dict[str, Any]) -> dict[str, Any]:
    from rsr_core import charts

    coverage, funnel = _fig["coverage"], _fig["funnel"]
    out = {}
    if coverage["harnesses"]:
        out["coverage_bars"] = charts.coverage_bars(_fig["harness"], coverage["union_solved"])
        out["coverage_upset"] = charts.coverage_upset(_fig["upset"])
    if funnel["runbooks"] or funnel["executions"]:
        out["funnel"] = charts.funnel_chart(_fig["funnel_frame"], funnel["expansion_ratio"])
    return out
