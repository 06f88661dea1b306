"""Keeping Streamlit's collection after every script run cheap (the state lives here, in an imported module:
the navigation script itself is executed anew on every run)."""

from __future__ import annotations

import gc

_FROZEN: set[str] = set()


def freeze_after_first_run(page: str) -> None:
    """After a page's first run in this process, move everything alive (modules, caches)
    out of the garbage collector's sight.

    Streamlit collects garbage after every script run (runner.postScriptGC): with pandas, pyarrow and
    pydantic loaded that full collection walks every long-lived object, a large part of a rerun (figures in
    benchmarks/RESULTS.md). Frozen objects are still freed when nothing references them; only cycles among
    them are never collected: they are the process's long-lived objects plus at most one run's leftovers per
    page (not collected first, which would cost the first visit the full collection this avoids).
    """
    if page in _FROZEN:
        return
    _FROZEN.add(page)
    gc.freeze()
