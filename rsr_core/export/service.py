"""Export service: `preview` (what would go out, and why the rest stays) and `export` (stream it to a file).

Trajectories are read from DuckDB as Arrow record batches in one pass over each table and written as they
come, so memory does not grow with the size of the export (the duplicate filter keeps 16 bytes per row).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from rsr_core import __version__
from rsr_core.export.card import card_path, render_card
from rsr_core.export.messages import messages_key, sft_messages
from rsr_core.export.models import (
    ATIF_VERSION,
    ExportFilters,
    ExportFormat,
    ExportPreview,
    ExportSummary,
    LeftOut,
)
from rsr_core.export.writers import ExportError, open_writer
from rsr_core.models import Trajectory
from rsr_core.store import Store
from rsr_core.store import export_queries as eq
from rsr_core.store.export_stream import stream_selected

CHUNK = 1000  # trajectories per progress report and per verdict lookup of an archive
Progress = Callable[[int, int], None]


def chunked(items: Iterator[Trajectory], size: int) -> Iterator[list[Trajectory]]:
    """Lists of up to `size` consecutive items."""
    chunk: list[Trajectory] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _selection(filters: ExportFilters) -> dict:
    return {
        "kinds": filters.selected_kinds(),
        "task_ids": filters.task_ids,
        "include_direct_terminus": filters.include_direct_terminus,
        "training": not filters.all_trajectories,
    }


def preview(store: Store, filters: ExportFilters | None = None) -> ExportPreview:
    """Counts of what an export with these filters takes and leaves out (nothing is read beyond counts)."""
    filters = filters or ExportFilters()
    left: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    by_harness: Counter[str] = Counter()
    selected = 0
    for reason, kind, harness, n in eq.selection_counts(store.cursor(), **_selection(filters)):
        selected += n
        if reason is None:
            by_kind[kind] += n
            by_harness[harness] += n
        else:
            left[reason] += n
    return ExportPreview(
        selected=selected,
        eligible=sum(by_kind.values()),
        left_out=LeftOut(**left),
        eligible_by_kind=dict(by_kind),
        eligible_by_harness=dict(by_harness),
    )


def export(
    store: Store,
    fmt: ExportFormat,
    out: str | Path,
    filters: ExportFilters | None = None,
    on_progress: Progress | None = None,
) -> ExportSummary:
    """Write the trajectories the filters select to `out` in `fmt`, with a dataset card beside it.

    Exact duplicates (same training messages) are dropped, the first in export order kept; an `atif` export
    with `all_trajectories` is an archive and keeps every trajectory, every step and the pipeline verdicts.
    """
    filters = filters or ExportFilters()
    out = Path(out)
    archive = fmt == "atif" and filters.all_trajectories
    plan = preview(store, filters)
    writer = open_writer(fmt, out, full=archive)
    cur = store.cursor()
    seen: set[bytes] = set()
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("task", "kind", "harness")}
    exported = duplicates = done = 0
    try:
        for trajectories in chunked(stream_selected(cur, **_selection(filters)), CHUNK):
            transfers, reviews = eq.carried_verdicts(cur, trajectories) if archive else ({}, {})
            for traj in trajectories:
                done += 1
                messages = [] if archive else sft_messages(traj)
                if not archive:
                    key = messages_key(messages)
                    if key in seen:
                        duplicates += 1
                        continue
                    seen.add(key)
                carried = (transfers.get(traj.trajectory_id), reviews.get(traj.runbook_id or "", []))
                writer.write(traj, messages, carried if archive else None)
                exported += 1
                counts["task"][traj.task_id or ""] += 1
                counts["kind"][traj.kind] += 1
                counts["harness"][traj.harness] += 1
            if on_progress:
                on_progress(done, plan.eligible)
        writer.close()
    except BaseException:
        writer.abort()
        raise
    categories = eq.task_categories(cur, [t for t in counts["task"] if t])
    by_category: Counter[str] = Counter()
    for task, n in counts["task"].items():
        by_category[categories.get(task) or ""] += n
    card = card_path(out, fmt)
    summary = ExportSummary(
        format=fmt,
        out=str(out),
        card=str(card),
        created_at=datetime.now(UTC),
        tool_version=__version__,
        atif_version=ATIF_VERSION if fmt == "atif" else None,
        filters=filters,
        selected=plan.selected,
        exported=exported,
        duplicates=duplicates,
        left_out=plan.left_out,
        by_task=dict(counts["task"]),
        by_category=dict(by_category),
        by_harness=dict(counts["harness"]),
        by_kind=dict(counts["kind"]),
    )
    card.write_text(render_card(summary, None if fmt == "atif" else out.name), encoding="utf-8")
    return summary


__all__ = ["ExportError", "export", "preview"]
