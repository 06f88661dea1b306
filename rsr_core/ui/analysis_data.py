"""Analysis results the pages show, cached per database state."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rsr_core.analysis.similarity import METRICS, score_pairs
from rsr_core.store import analysis_queries
from rsr_core.ui.widgets import app_services


@st.cache_data(show_spinner="scoring rewrite pairs…", max_entries=4)
def similarity_pairs(db_path: str, n_rewrites: int) -> pd.DataFrame:
    """Every same-task pair of passed rewrites with all five metrics (recomputed when rewrites change)."""
    cur = app_services().store.cursor()
    rewrites = analysis_queries.passed_rewrites(cur)
    commands = analysis_queries.passed_rewrite_commands(cur)
    return score_pairs(rewrites, commands, METRICS)
