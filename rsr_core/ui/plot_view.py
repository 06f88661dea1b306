"""Drawing the studio's plotly figures (rsr_core/ui/plots.py) and following a click on one of their marks.

A clickable figure is drawn with Streamlit's selection events (`on_select="rerun"`, points only): the run after a
click reads the selected mark's customdata, an index into the figure's pairs, and opens that pair side by side
on the Trajectories page (`?compare=A&compare=B`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import plotly.graph_objects as go
import streamlit as st

from rsr_core.ui.navigation import PAGES
from rsr_core.ui.plots import Figure

Width = Literal["stretch", "content"]
# No plotly logo, no "edit in chart studio" link; the mode bar keeps zoom, pan, reset and the image download.
CONFIG = {"displaylogo": False, "showLink": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


def draw(figure: go.Figure | Figure, *, key: str, width: Width = "stretch") -> None:
    """Draw a figure that opens nothing on a click (hover, zoom and pan only)."""
    fig = figure.figure if isinstance(figure, Figure) else figure
    st.plotly_chart(fig, key=key, width=width, config=CONFIG)


def clicked_pair(figure: Figure, event: Any) -> tuple[str, str] | None:
    """The pair behind the mark a selection event names (its customdata[0]), if any: None for no selection or
    a mark that stands for no pair."""
    selection = event.get("selection") if isinstance(event, Mapping) else None
    points = selection.get("points", []) if isinstance(selection, Mapping) else []
    for point in points:
        custom = point.get("customdata")
        index = custom[0] if isinstance(custom, list | tuple) and custom else custom
        if isinstance(index, int | float) and 0 <= int(index) < len(figure.pairs):
            return figure.pairs[int(index)]
    return None


def draw_opening_pairs(figure: Figure, *, key: str, width: Width = "stretch") -> None:
    """Draw `figure`; a click on a mark that stands for a pair opens that pair side by side."""
    if not figure.clickable:
        draw(figure, key=key, width=width)
        return
    event = st.plotly_chart(
        figure.figure,
        key=key,
        width=width,
        config=CONFIG,
        on_select="rerun",
        selection_mode="points",
    )
    pair = clicked_pair(figure, event)
    if pair is not None:
        open_pair(*pair)


def open_pair(a: str, b: str) -> None:
    """Open trajectories `a` and `b` side by side (the Trajectories page's `?compare=A&compare=B`)."""
    st.switch_page(PAGES / "trajectories.py", query_params={"compare": [a, b]})
