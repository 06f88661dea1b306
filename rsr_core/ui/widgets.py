"""Streamlit helpers shared by the pages. Content from trajectories and runbooks is always shown as text
(the studio's table and step cards set it as text content; markdown gets every punctuation character
escaped), never as HTML."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import pandas as pd
import streamlit as st

from rsr_core.store import StoreBusyError, app_queries, queries
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cached, Cursor, cached, services_for
from rsr_core.ui.navigation import PAGES
from rsr_core.ui.text import md_escape


def app_services() -> AppServices:
    """The process-wide services for RSR_DB; a database another process keeps open stops the page with a clear
    message (after the bounded wait)."""
    from rsr_core.settings import Settings

    db = Settings.from_env().db_path
    try:
        return services_for(db)
    except StoreBusyError as exc:
        busy_notice(exc)
        st.stop()


def busy_notice(exc: StoreBusyError) -> None:
    """The database stayed in use by another process for longer than RSR_DB_WAIT."""
    st.error(md_escape(str(exc)))
    st.info(
        "Another process kept the database open longer than RSR_DB_WAIT seconds (a long export or similarity "
        "run holds it while it reads). Reload this page when it is done."
    )


def money_column(values: pd.Series) -> pd.Series:
    """Costs as the tables show them: dollars, or "unknown" where no price was recorded or configured."""
    return values.map(lambda v: "unknown" if pd.isna(v) else f"${v:.4f}")


@cached
def _summary(cur: Cursor) -> dict:
    return queries.summary(cur)


@cached
def _scripted_share(cur: Cursor) -> tuple[int, int]:
    return app_queries.scripted_share(cur)


def frame_reads() -> tuple[Cached[Any], ...]:
    """The reads of every page's frame (`require_data`, `scripted_banner`): counts of tasks, trajectories, steps
    and commands, which a review does not change."""
    return (_summary, _scripted_share)


def summary(ctx: AppServices) -> dict:
    """`rsr stats summary` figures (cached until the data changes)."""
    return _summary(ctx)


def scripted_banner(ctx: AppServices) -> None:
    """Say so when what the page shows comes (partly) from the scripted demo model."""
    scripted, total = _scripted_share(ctx)
    if scripted:
        st.info(
            f"Demo data: {scripted:,} of {total:,} trajectories were made with the project's scripted model "
            "(replayed answers, not sampled); their terminal output is real. Training exports leave them out "
            "unless asked."
        )


def require_data(ctx: AppServices) -> bool:
    """Show guidance instead of empty tables when the database holds nothing; True when there is data."""
    figures = summary(ctx)
    if figures["tasks"] or sum(figures["trajectories"].values()):
        return True
    st.info(
        "This database is empty. Load the demo corpus (8 tasks with recorded discovery and rewrite runs) or "
        "ingest your own runs with `rsr ingest PATH` (ATIF trajectory.json, harbor job/trial/task dirs, "
        "Terminal-Bench runs and tasks)."
    )
    if st.button("Load the demo corpus", key="load_demo"):
        from rsr_core.demo import build_demo

        report = build_demo(ctx.store)
        st.success(f"Loaded {report.trajectories_added} trajectories and {report.tasks_added} tasks.")
        st.rerun()
    return False


def select_in_popover(
    where: Any,
    label: str,
    options: Sequence[Any],
    key: str,
    *,
    format_func: Callable[[Any], str] = str,
    name: str | None = None,
    width: Literal["stretch", "content"] = "stretch",
) -> Any:
    """A select box in a popover (key `<key>_pop`, in `where`: st or a column) labelled `<name>: <choice>`
    (`name`: `label` unless told). The browser draws a popover's widgets only when it is opened: a select box
    is costly to draw (thousands of options more so), a closed popover next to nothing."""
    current = st.session_state.get(key)
    # A choice kept from an earlier run that is no longer an option (the options follow another choice): the
    # select box falls back to the first option, and so does the label.
    choice = format_func(current if current in options else (options[0] if options else None))
    with where.popover(md_escape(f"{name or label}: {choice}"), width=width, key=f"{key}_pop"):
        return st.selectbox(label, options, key=key, format_func=format_func)


def page_number(
    where: Any,
    label: str,
    rows: int,
    per_page: int,
    counted: str,
    key: str,
    first: int = 1,
    one_page_hidden: bool = False,
) -> int:
    """The page of a paged view: a number field in `where` labelled "`label` (of N; `counted`)", starting at
    `first` (clamped); with `one_page_hidden`, no field when everything fits on one page."""
    pages = max(1, math.ceil(rows / per_page))
    if one_page_hidden and pages == 1:
        return 1
    return int(where.number_input(f"{label} (of {pages}; {counted})", 1, pages, min(first, pages), key=key))


def page_link(label: str, page: str, **params: str) -> None:
    """A link to another page of the studio with query parameters, opened in the same tab (a plain link when
    the page runs outside the studio's navigation, as in AppTest)."""
    from urllib.parse import quote, urlencode

    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(str(PAGES / f"{page}.py"), label=label, query_params=params or None)
    except StreamlitAPIException:
        url = f"./{page}?{urlencode(params, quote_via=quote)}" if params else f"./{page}"
        st.markdown(f"[{md_escape(label)}]({url})")
