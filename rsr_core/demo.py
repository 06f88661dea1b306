"""Building the demo database from the committed demo corpus (no Docker, no model needed)."""

from __future__ import annotations

from pathlib import Path

from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import IngestReport
from rsr_core.store import Store

DATA = Path(__file__).resolve().parents[1] / "data"
DEMO_TASKS = DATA / "demo" / "tasks"
DEMO_JOBS = DATA / "demo" / "jobs"
DEMO_SCRIPT = DATA / "scripted" / "demo_model.json"


def build_demo(store: Store) -> IngestReport:
    """Ingest the demo tasks and every recorded job (discovery and rewrite trajectories)."""
    return ingest_paths(store, [DEMO_TASKS, DEMO_JOBS])


def is_empty(store: Store) -> bool:
    """No tasks and no trajectories yet."""
    s = store.summary()
    return s["tasks"] == 0 and sum(s["trajectories"].values()) == 0
