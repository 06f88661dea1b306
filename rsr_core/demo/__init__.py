"""Building the demo database from the committed demo corpus (no Docker, no model needed)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import IngestReport
from rsr_core.store import Store
from rsr_core.store.dump import load_pipeline


def demo_data() -> Path:
    """The demo corpus: the repository's data/, shipped in the package as `rsr_core.demo_data`."""
    return Path(str(resources.files("rsr_core.demo_data")))


DATA = demo_data()
DEMO_TASKS = DATA / "demo" / "tasks"
DEMO_JOBS = DATA / "demo" / "jobs"
DEMO_SCRIPT = DATA / "scripted" / "demo_model.json"
DEMO_SCRIPT_DIR = DATA / "demo" / "script"
"""The scripted demo model's answers, from which DEMO_SCRIPT is built (rsr_core/demo/script.py)."""
DEMO_PIPELINE = DATA / "demo_pipeline"


def build_demo(store: Store) -> IngestReport:
    """Ingest the demo tasks and every recorded job (discovery and rewrite trajectories), then load the rewrite
    pipeline's rows (runbooks, critic flags, reviews, transfer checks, jobs)."""
    # In-process: the app calls this from a threaded server, where forking parser processes is unsafe (and the
    # demo is small).
    report = ingest_paths(store, [DEMO_TASKS, DEMO_JOBS], workers=1)
    if DEMO_PIPELINE.is_dir():
        with store.transaction() as cur:
            load_pipeline(cur, DEMO_PIPELINE)
    return report


def is_empty(store: Store) -> bool:
    """No tasks and no trajectories yet."""
    s = store.summary()
    return s["tasks"] == 0 and sum(s["trajectories"].values()) == 0
