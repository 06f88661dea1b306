"""The studio's navigation: the page list, nothing else. Streamlit runs this script for every page run (the
server, with its warm-up, is rsr_core/ui/app.py); the pages are the thin files beside it in `screens/`.

The folder is not called `pages/`: Streamlit lists a `pages/` folder beside the main script as pages of their
own, and a session whose first visit after a start is a deep link (`/trajectories?...`) would get that listing
and the page file run without this script (no page list, no layout, no per-run store use)."""

from pathlib import Path

import streamlit as st

from rsr_core.ui.data import one_use_per_run
from rsr_core.ui.memory import freeze_after_first_run

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
            page.run()
    finally:
        freeze_after_first_run(page.url_path or "overview")


if __name__ == "__main__":  # Streamlit runs its main script as __main__
    navigate()
