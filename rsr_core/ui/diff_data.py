"""The Diff page's reads, cached until the data changes."""

from __future__ import annotations

from typing import Any

import pandas as pd

from rsr_core.store import app_queries, pipeline, queries
from rsr_core.ui.data import Cursor, cached
from rsr_core.ui.views import DiffRow, command_diff, pair_figures

DIFF_ROWS = 200


@cached
def sources(cur: Cursor) -> pd.DataFrame:
    """Source trajectories that have rewrites."""
    return app_queries.sources_with_rewrites(cur)


@cached
def rewrites_of(cur: Cursor, source_id: str) -> list[dict[str, Any]]:
    """A source's rewrites with their status and, when flagged, the transfer evidence."""
    frame = app_queries.rewrites_with_status(cur, "source_trajectory_id", source_id)
    rows: list[dict[str, Any]] = [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]
    for row in rows:
        verdict = pipeline.transfer_of(cur, row["trajectory_id"])
        row["evidence"] = (verdict.deterministic_evidence + verdict.llm_evidence) if verdict else []
    return rows


@cached
def diff_of(cur: Cursor, source_id: str, rewrite_id: str) -> tuple[list[DiffRow], dict[str, float]]:
    """The aligned command diff of a pair and its five overlap figures."""
    a = queries.commands_of_trajectory(cur, source_id)
    b = queries.commands_of_trajectory(cur, rewrite_id)
    return command_diff(a, b), pair_figures(a, b)
