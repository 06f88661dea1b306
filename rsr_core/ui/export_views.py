"""Export page helpers: the exact preview (cached until the data changes), the left-out table, default paths,
and a zip of the written export for download."""

from __future__ import annotations

import io
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rsr_core.export.models import ExportFilters, ExportPreview
from rsr_core.export.service import preview
from rsr_core.store import app_queries
from rsr_core.ui.context import AppServices
from rsr_core.ui.data import Cursor, background_priority, cached, db_signature
from rsr_core.vocabulary import LEFT_OUT, export_format


@cached
def _tasks(cur: Cursor) -> list[str]:
    return app_queries.facet_values(cur)["task_id"]


def task_ids(ctx: AppServices) -> list[str]:
    """Task ids for the filter."""
    return _tasks(ctx)


@dataclass
class Counting:
    """The export's dry run for one database state and one set of filters, run in a background thread."""

    signature: tuple
    thread: threading.Thread | None = None
    result: ExportPreview | None = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()


_COUNTS: dict[tuple[str, str], Counting] = {}
_GUARD = threading.Lock()
KEEP = 16  # dry runs remembered (filter sets x databases)
WAIT_S = 0.3  # a small database's count is shown at once, a large one's follows when ready
_TOOK: dict[str, float] = {}  # how long the last count of each database took


def _let_others_run() -> None:
    """Give the interpreter up for a moment: the count is pure Python between its reads, and the server's
    threads (the pages being drawn meanwhile) would otherwise wait for it."""
    time.sleep(0)


def _count(ctx: AppServices, filters: ExportFilters, job: Counting) -> None:
    background_priority()
    try:
        job.result = preview(ctx.store, filters, between=_let_others_run)
    except Exception as exc:  # noqa: BLE001 - shown on the page
        job.error = f"{type(exc).__name__}: {exc}"
    _TOOK[ctx.settings.db_path] = time.monotonic() - job.started


def plan_of(ctx: AppServices, filters: ExportFilters) -> tuple[ExportPreview | None, bool, str | None]:
    """The export's own dry run for these filters: (the latest finished count, whether it is of the data as it
    is now, an error). A count reads the training keys the store keeps (quick, so waited for here); where they
    are missing (a database stored before them, until its next ingest) it builds every row, which at paper
    scale takes far longer. So it runs in the background, once per database state and filters, and the
    page shows the last count until the new one is ready."""
    path = ctx.settings.db_path
    key, signature = (path, filters.model_dump_json()), db_signature(path)
    with _GUARD:
        job = _COUNTS.get(key)
        if job is None or (job.signature != signature and not job.running):
            previous = job
            job = Counting(signature)
            if previous is not None:
                job.result = previous.result  # shown, marked as earlier, until the new count is done
            # Not a daemon: at exit the interpreter waits for it rather than kill it inside DuckDB (which aborts).
            job.thread = threading.Thread(target=_count, args=(ctx, filters, job), name="export-count")
            job.thread.start()
            _COUNTS[key] = job
            while len(_COUNTS) > KEEP:
                _COUNTS.pop(next(iter(_COUNTS)))
    # Waited for in the count's first WAIT_S only, and not at all where the last count of this database took
    # longer: a page (or its poll) is not held up by a count it will not see finish anyway.
    left = WAIT_S - (time.monotonic() - job.started)
    if job.thread is not None and job.thread.is_alive() and left > 0 and _TOOK.get(path, 0.0) < WAIT_S:
        job.thread.join(left)
    current = not job.running and job.signature == signature and job.error is None
    return job.result, current, job.error


def left_out_frame(plan: ExportPreview) -> pd.DataFrame:
    """Reason, explanation, count."""
    rows = [
        {"reason": r.name, "why": r.studio, "trajectories": getattr(plan.left_out, r.name)} for r in LEFT_OUT
    ]
    return pd.DataFrame(rows)


def default_out(fmt: str) -> str:
    """Where an export goes by default."""
    return str(Path("exports") / f"rsr-{export_format(fmt).file_name}")


def archive_bytes(out: str, card: str) -> tuple[str, bytes]:
    """A zip of the export (file or directory) and its dataset card."""
    path, card_path = Path(out), Path(card)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(path.parent))
        elif path.is_file():
            zf.write(path, path.name)
            if card_path.is_file():
                zf.write(card_path, card_path.name)
    return f"{path.name}.zip", buf.getvalue()
