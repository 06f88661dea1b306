"""The Overview page's figures, cached until the data changes (one read of the store per change)."""

from __future__ import annotations

from typing import Any

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
