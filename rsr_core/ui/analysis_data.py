"""Analysis results the pages show, cached per database state (recomputed when the number of rewrites changes)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rsr_core.analysis.similarity import score_pairs, summary_frame
from rsr_core.store import analysis_queries
from rsr_core.ui.widgets import services_for

DISPLAY_PAIRS = 20_000  # distributions are drawn from at most this many pairs; means and CIs use them all


@st.cache_data(show_spinner="scoring rewrite pairs…", max_entries=12)
def pairs_for(db_path: str, n_rewrites: int, metric: str) -> pd.DataFrame:
    """Every same-task pair of passed rewrites with one metric."""
    with services_for(db_path).store.reading() as cur:
        rewrites = analysis_queries.passed_rewrites(cur)
        commands = analysis_queries.passed_rewrite_commands(cur)
    return score_pairs(rewrites, commands, [metric])


@st.cache_data(show_spinner="bootstrapping confidence intervals…", max_entries=12)
def summary_for(db_path: str, n_rewrites: int, metrics: tuple[str, ...]) -> pd.DataFrame:
    """Pairs, means and 95% bootstrap CIs, same vs cross, per metric."""
    return pd.concat(
        [summary_frame(pairs_for(db_path, n_rewrites, m), [m]) for m in metrics], ignore_index=True
    )


def all_metrics(db_path: str, n_rewrites: int, metrics: tuple[str, ...]) -> pd.DataFrame:
    """One pairs frame with a column per metric."""
    frames = [pairs_for(db_path, n_rewrites, m) for m in metrics]
    out = frames[0].copy()
    for metric, frame in zip(metrics[1:], frames[1:], strict=True):
        out[metric] = frame[metric].to_numpy()
    return out


def display_sample(pairs: pd.DataFrame, limit: int = DISPLAY_PAIRS) -> pd.DataFrame:
    """A seeded sample of pairs small enough to draw (all of them when there are few)."""
    return pairs if len(pairs) <= limit else pairs.sample(limit, random_state=0)
