"""The studio's charts drawn on the server: a Vega-Lite spec (rsr_core/charts.py, rsr_core/count_charts.py)
rendered to SVG by vl-convert and shown as an image.

Streamlit's own chart element loads and starts Vega in the browser on every page load: measured beside a
one-button page, that is a large share of a page load (figures in benchmarks/RESULTS.md). An image costs the browser
next to nothing and is one DOM node, however many marks it has. Each SVG is rendered once per content of its
spec (the renderer's first start is slow and done by the server's warm-up) and cached. Images have no tooltips: the figures behind every chart are in the tables beside it.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from rsr_core.ui.text import shown

Spec = dict[str, Any]
# Close to Streamlit's own chart theme: the image is drawn with the browser's sans-serif (no web fonts reach
# an image), grey axes and light grid lines, and no frame around the plot.
THEME: Spec = {
    "font": "Source Sans Pro, Helvetica, Arial, sans-serif",
    "background": "#ffffff",
    "view": {"stroke": None},
    "axis": {
        "labelFontSize": 12,
        "titleFontSize": 13,
        "titleFontWeight": "normal",
        "labelColor": "#555867",
        "titleColor": "#555867",
        "gridColor": "#e6eaf1",
        "domainColor": "#cfd3dc",
        "tickColor": "#cfd3dc",
    },
    "legend": {"labelFontSize": 13, "titleFontSize": 13, "labelColor": "#31333f", "labelLimit": 240},
    "title": {"fontSize": 15, "fontWeight": 600, "color": "#31333f", "anchor": "start"},
    "header": {"labelFontSize": 12, "titleFontSize": 13},
}
WIDE = 760  # px of a chart that had the page's width
HALF = 460  # px of a chart in one of two columns
CACHED = 64  # rendered charts kept (a few KB to ~100 KB each)


@st.cache_resource(show_spinner=False, max_entries=CACHED)
def _render(spec_json: str) -> str:
    import vl_convert

    return str(vl_convert.vegalite_to_svg(json.loads(spec_json), config=THEME))


COMPOSED = ("facet", "concat", "hconcat", "vconcat")  # specs whose parts have widths of their own


def svg(spec: Spec, width: int = WIDE) -> str:
    """The chart of `spec` as SVG text; a chart that leaves its width to its container is `width` px wide (the
    page's, unless told), one composed of parts (facets, concatenations) as wide as its parts."""
    if spec.get("width", "container") == "container" and not any(k in spec for k in COMPOSED):
        spec = {**spec, "width": width}
    return _render(json.dumps(_visible(spec), sort_keys=True, default=str))


def _visible(value: Any) -> Any:
    """`value` with every string in it as the studio shows text (`text.shown`): a task id or reviewer name with
    a bidi control would otherwise be drawn reversed in an axis label or legend. Keys are the program's own."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {k: _visible(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_visible(v) for v in value]
    return value


def chart(spec: Spec) -> None:
    """Draw the chart of `spec` (see `svg`) as an image at its own size (narrower when its column is)."""
    st.image(svg(spec))


def warm_up() -> None:
    """Start the renderer (its first chart takes about 0.5 s)."""
    svg(
        {
            "mark": "point",
            "data": {"values": [{"x": 0}]},
            "encoding": {"x": {"field": "x", "type": "quantitative"}},
        }
    )
