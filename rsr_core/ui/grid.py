"""The studio's table: a custom component (no iframe) that draws rows as plain text in an HTML table, with
optional checkboxes. Streamlit's data grid has a large fixed cost to draw in the browser whatever its size;
this one costs what the rows cost. Selections are row keys, kept across pages and reruns."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import pandas as pd
import streamlit as st

from rsr_core.ui.component import mount
from rsr_core.ui.text import shown

Select = Literal["none", "multi"]
Format = Callable[[Any], str]


def cell(value: Any) -> str:
    """A value as the table shows it: empty for missing, integers without a point, other numbers to 4 places."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:.4g}"
    return str(value)


def grid(
    frame: pd.DataFrame,
    *,
    key: str,
    row_key: str | None = None,
    select: Select = "none",
    labels: Mapping[str, str] | None = None,
    formats: Mapping[str, Format] | None = None,
    height: int | None = None,
    tones: Sequence[str] | None = None,
    wrap: Sequence[str] = (),
    mono: Sequence[str] = (),
    open_column: str | None = None,
    on_open: Callable[[str], None] | None = None,
) -> list[str]:
    """Draw `frame`; return the keys (values of `row_key`) of the rows chosen, on this page or earlier ones.

    `tones` colours rows ("delete", "insert", "replace": red, green, yellow); the columns in `wrap` wrap their
    text (commands, reasons) instead of being cut at the cell's width, those in `mono` in the code font. The
    cells of `open_column` are buttons: in the run after one is clicked, `on_open` gets that row's key."""
    labels, formats = labels or {}, formats or {}
    keys = [str(v) for v in frame[row_key]] if row_key else [str(i) for i in range(len(frame))]
    state = st.session_state.get(key) or {}
    chosen = list(state.get("selected") or []) if select != "none" else []
    columns = list(frame.columns)
    rows = [
        [shown(formats.get(c, cell)(v)) for c, v in zip(columns, values, strict=True)]
        for values in frame.itertuples(index=False, name=None)
    ]
    data = {
        "ids": [str(c) for c in columns],
        "columns": [shown(str(labels.get(c, c))) for c in columns],
        "numeric": [pd.api.types.is_numeric_dtype(frame[c]) and c not in formats for c in columns],
        "rows": rows,
        "keys": keys,
        "selected": chosen,
        "select": select,
        "tones": list(tones) if tones is not None else [],
        "wrap": [c in wrap for c in columns],
        "mono": [c in mono for c in columns],
        "open": columns.index(open_column) if open_column is not None else None,
    }
    result = mount("rsr_core.grid", "grid")(
        key=key,
        data=data,
        default={"selected": chosen},
        on_selected_change=lambda: None,
        on_opened_change=lambda: None,
        height=height if height else "content",
    )
    opened = getattr(result, "opened", None) if result is not None else None
    if opened is not None and on_open is not None:
        on_open(str(opened))
    picked = getattr(result, "selected", None) if result is not None else None
    return [str(k) for k in picked or []] if select != "none" else []


def table(frame: pd.DataFrame, *, key: str, **options: Any) -> None:
    """A read-only table (no selection)."""
    grid(frame, key=key, **options)


def clear(key: str) -> None:
    """Forget the rows chosen in the table `key`."""
    state = st.session_state.get(key)
    if isinstance(state, dict):
        state["selected"] = []
