"""The studio's navigation: the page list, nothing else. Streamlit runs this script for every page run (the
server, with its warm-up, is rsr_core/ui/app.py); the pages are the thin files beside it in `screens/`.

The folder is not called `pages/`: Streamlit lists a `pages/` folder beside the main script as pages of their
own, and a session whose first visit after a start is a deep link (`/trajectories?...`) would get that listing
and the page file run without this script (no page list, no layout, no per-run store use)."""

from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.logger import get_logger

from rsr_core.errors import RsrError
from rsr_core.ui.data import one_use_per_run
from rsr_core.ui.memory import freeze_after_first_run
from rsr_core.ui.text import md_escape

PAGES = Path(__file__).resolve().parent / "screens"
PAGE_TITLES = {
    "overview": "Overview",
    "trajectories": "Trajectories",
    "diff": "Diff",
    "runbooks": "Runbooks",
    "rewrite": "Rewrite",
    "similarity": "Similarity",
    "export": "Export",
}


def navigate() -> None:
    """Build the page list and run the selected page."""
    st.set_page_config(page_title="RSR Studio", layout="wide")
    pages = [
        st.Page(PAGES / f"{name}.py", title=title, default=name == "overview")
        for name, title in PAGE_TITLES.items()
    ]
    page = st.navigation(pages)
    try:
        with one_use_per_run():
            run_shown(page.run)
    finally:
        freeze_after_first_run(page.url_path or "overview")


def run_shown(run: Callable[[], None]) -> None:
    """Run a page; what it raises is shown as one error box with the message and where to look, and the
    traceback goes to the server's log (a page's traceback would show the installation's paths to every
    reader). Streamlit's own controls (`st.rerun`, `st.stop`) are not exceptions and pass through."""
    try:
        run()
    except RsrError as exc:  # a refusal the user can act on: its message is the whole story
        st.error(md_escape(str(exc)))
    except Exception as exc:  # noqa: BLE001 - the page's last line of defence
        get_logger(__name__).exception("a page of the studio failed")
        st.error(
            md_escape(
                f"This page failed: {type(exc).__name__}: {str(exc)[:500]}. The full report is in the log of "
                "the studio's server (the terminal running `rsr app`); other pages still work."
            )
        )


if __name__ == "__main__":  # Streamlit runs its main script as __main__
    navigate()
