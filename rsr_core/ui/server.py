"""The studio's server side: what `streamlit run` starts before it serves anyone.

Streamlit serves the studio as an ASGI app (rsr_core/ui/app.py) whose lifespan warms the process up: the
modules every page imports (pandas, pyarrow, DuckDB, pydantic models, plotly and the chart builders, and
the Rewrite page's model client and job runner), the store (opened and migrated), whether the
sandbox engine answers, the first page's reads and charts (cached per database state, as
a page run would) and, when the stored similarity scores are stale, their refresh in the background. The
server answers its health check only after this, so the first page after a start costs what a later one does;
the long-lived heap is then frozen out of the garbage collector's sight (see rsr_core/ui/memory.py).
"""

from __future__ import annotations

import gc
import importlib
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.middleware import Middleware

from rsr_core.ui.base_url import BackendBaseUrl

NAVIGATION = Path(__file__).resolve().parent / "navigation.py"
MODULES = (
    "pandas",
    "pyarrow",
    "plotly.graph_objects",
    "rsr_core.ui.plots",
    "rsr_core.ui.widgets",
    "rsr_core.ui.overview_data",
    "rsr_core.ui.trajectory_views",
    "rsr_core.ui.runbook_views",
    "rsr_core.ui.diff_data",
    "rsr_core.ui.analysis_data",
    "rsr_core.ui.export_views",
    "rsr_core.ui.rewrite_views",
    "rsr_core.ui.jobs",
    "rsr_core.llm.client",
    "rsr_core.ui.navigation",
)
# A page opened by its own address connects at once (see base_url.py).
MIDDLEWARE = [Middleware(BackendBaseUrl)]
# The interpreter's switch interval while the studio serves (Python's default: 5 ms). Background work in the
# server's process (an export count, a job's threads) holds the interpreter while the threads drawing pages
# wait for it, up to one interval each time they come back from the network: 0.5 ms keeps pages quick.
SWITCH_INTERVAL_S = 0.0005
_LOG = logging.getLogger("rsr_core.ui")


def _first_reads() -> None:
    """Open the store for RSR_DB and fill the caches the Overview and the list read first."""
    from rsr_core.analysis.pair_metrics import METRICS
    from rsr_core.settings import Settings
    from rsr_core.ui import analysis_data, plots, rewrite_views, trajectory_views
    from rsr_core.ui.data import services_for
    from rsr_core.ui.overview_data import overview_charts, overview_figures
    from rsr_core.ui.widgets import _scripted_share, summary

    settings = Settings.from_env()
    ctx = services_for(settings.db_path)
    # The Rewrite page's first look at the engine, beside the rest (an engine that does not answer would hold
    # the start up to the client's timeout).
    threading.Thread(
        target=rewrite_views.docker_status, args=(settings.base_image,), name="docker-status", daemon=True
    ).start()
    counts = summary(ctx)
    if not (counts["tasks"] or sum(counts["trajectories"].values())):
        return
    _scripted_share(ctx)
    for fig in overview_charts(overview_figures(ctx)).values():
        fig.to_json()  # plotly validates and encodes a figure's first JSON slowly
    trajectory_views._facets(ctx)  # noqa: SLF001 - the list's first read
    if not analysis_data.state(ctx)["current"]:
        analysis_data.background_refresh(ctx)
    elif analysis_data.state(ctx)["pairs"]:  # the Similarity page's first view, as it reads it
        stats = analysis_data.metric_stats(ctx, METRICS)
        plots.by_metric(stats, "box").figure.to_json()
        analysis_data.summary_table(ctx, METRICS)
        tasks = list(analysis_data.task_pairs(ctx)["task_id"])
        analysis_data.grouped_stats(ctx, METRICS[0], "task_id", tuple(tasks[:20]))
        analysis_data.grouped_stats(ctx, METRICS[0], "category")
        analysis_data.heatmap_pairs(ctx, sorted(tasks)[0], METRICS[0])


def warm(steps: tuple[Any, ...] = ()) -> None:
    """Import, build and read what the first page run would, then freeze the long-lived heap."""
    started = time.monotonic()
    for name in MODULES:
        importlib.import_module(name)
    for step in steps or (_first_reads,):
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - a page meets and reports the same; the server still starts
            print(f"rsr: warm-up step {step.__name__} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    gc.collect()
    gc.freeze()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    print(f"rsr: studio warmed up in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)


@asynccontextmanager
async def warm_up(app: Any) -> AsyncIterator[None]:
    """The ASGI lifespan: warm up before serving."""
    warm()
    yield
