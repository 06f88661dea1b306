"""A row of headline figures (label over value, as Streamlit's metric draws them), drawn by one component: five
metrics in five columns are many elements for the browser to draw, this row what its text costs."""

from __future__ import annotations

from collections.abc import Mapping

from rsr_core.ui.component import mount
from rsr_core.ui.text import shown


def figures(values: Mapping[str, object], *, key: str) -> None:
    """Draw `values` (label -> figure, in order) as one row; integers with thousands separators."""
    cells = [{"label": shown(label), "value": shown(_text(value))} for label, value in values.items()]
    mount("rsr_core.figures", "figures")(key=key, data={"figures": cells})


def _text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
