"""Export service: `preview` (what would go out, and why the rest stays) and `export` (stream it to a file).

Trajectories are read from DuckDB as Arrow record batches in one pass over each table and written as they
come, so memory does not grow with the size of the export (the duplicate filter keeps 16 bytes per row).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from rsr_core import __version__
from rsr_core.export.card import card_path, render_card
from rsr_core.export.messages import messages_key, training_row
from rsr_core.export.models import (
    ATIF_VERSION,
    ExportFilters,
    ExportFormat,
    ExportPreview,
    ExportSummary,
    LeftOut,
)
from rsr_core.export.writers import AtifDirWriter, ExportError, NullWriter, RowWriter, open_writer
from rsr_core.models import Trajectory
from rsr_core.outputs import AtomicFile, output_path
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
        "include_scripted": filters.include_scripted or filters.all_trajectories,
    }


@dataclass
class _Pass:
    """What one pass over the selection found: counts, left-out reasons, per-task/kind/harness rows."""

    selected: int = 0
    exported: int = 0
    duplicates: int = 0
    left: Counter[str] = field(default_factory=Counter)
    by: dict[str, Counter[str]] = field(
        default_factory=lambda: {k: Counter() for k in ("task", "kind", "harness")}
    )


def _run(
    store: Store,
    filters: ExportFilters,
    writer: RowWriter,
    archive: bool,
    on_progress: Progress | None,
    between: Callable[[], None] | None = None,
) -> _Pass:
    """The one pass behind both `preview` and `export`: selection reasons from SQL, then per trajectory the
    training messages (or why there are none) and the duplicate filter; rows go to `writer`. `between` is
    called between trajectories."""
    with store.reading() as cur:
        return _run_on(cur, filters, writer, archive, on_progress, between)


def _run_on(
    cur: duckdb.DuckDBPyConnection,
    filters: ExportFilters,
    writer: RowWriter,
    archive: bool,
    on_progress: Progress | None,
    between: Callable[[], None] | None = None,
) -> _Pass:
    result = _Pass()
    eligible = 0
    for reason, _kind, _harness, n in eq.selection_counts(cur, **_selection(filters)):
        result.selected += n
        if reason is None:
            eligible += n
        else:
            result.left[reason] += n
    seen: set[bytes] = set()
    done = 0
    for trajectories in chunked(stream_selected(cur, **_selection(filters)), CHUNK):
        transfers, reviews = eq.carried_verdicts(cur, trajectories) if archive else ({}, {})
        instructions = (
            {} if archive else eq.task_instructions(cur, [t.task_id for t in trajectories if t.task_id])
        )
        for traj in trajectories:
            if between is not None:
                between()
            done += 1
            if archive:
                messages: list[dict[str, str]] = []
                why = None if any(s.source == "agent" for s in traj.steps) else "no_steps"
            else:
                messages, why = training_row(traj, instructions.get(traj.task_id or ""))
            if why is not None:
                result.left[why] += 1
                continue
            if not archive:
                key = messages_key(messages)
                if key in seen:
                    result.duplicates += 1
                    continue
                seen.add(key)
            carried = (transfers.get(traj.trajectory_id), reviews.get(traj.runbook_id or "", []))
            writer.write(traj, messages, carried if archive else None)
            result.exported += 1
            result.by["task"][traj.task_id or ""] += 1
            result.by["kind"][traj.kind] += 1
            result.by["harness"][traj.harness] += 1
        if on_progress:
            on_progress(done, eligible)
    return result


def preview(
    store: Store,
    filters: ExportFilters | None = None,
    on_progress: Progress | None = None,
    between: Callable[[], None] | None = None,
) -> ExportPreview:
    """Exactly what `export` with these filters would write (the same pass, nothing written): rows, duplicates
    and every left-out reason. `between` is called between trajectories (a count in the background of a
    server lets the server's own threads run there)."""
    filters = filters or ExportFilters()
    archive = filters.all_trajectories
    found = _run(store, filters, NullWriter(), archive, on_progress, between)
    return ExportPreview(
        selected=found.selected,
        eligible=found.exported + found.duplicates,
        exported=found.exported,
        duplicates=found.duplicates,
        left_out=LeftOut(**found.left),
        eligible_by_kind=dict(found.by["kind"]),
        eligible_by_harness=dict(found.by["harness"]),
    )


def export(
    store: Store,
    fmt: ExportFormat,
    out: str | Path,
    filters: ExportFilters | None = None,
    on_progress: Progress | None = None,
    force: bool = False,
) -> ExportSummary:
    """Write the trajectories the filters select to `out` in `fmt`, with a dataset card (see `card_path`).

    Exact duplicates (same training messages) are dropped, the first in export order kept; an `atif` export
    with `all_trajectories` is an archive and keeps every trajectory, every step and the pipeline verdicts.
    An existing output is replaced only with `force` (rsr_core/outputs.py); the output and its card appear
    only when complete.
    """
    filters = filters or ExportFilters()
    out = output_path(out, directory=fmt == "atif")
    archive = fmt == "atif" and filters.all_trajectories
    card = card_path(out, fmt)
    writer = open_writer(fmt, out, full=archive, force=force)
    try:
        card_file = None if fmt == "atif" else AtomicFile(card, force)
    except BaseException:
        writer.abort()
        raise
    try:
        found = _run(store, filters, writer, archive, on_progress)
        with store.reading() as cur:
            categories = eq.task_categories(cur, [t for t in found.by["task"] if t])
        by_category: Counter[str] = Counter()
        for task, n in found.by["task"].items():
            by_category[categories.get(task) or ""] += n
        summary = ExportSummary(
            format=fmt,
            out=str(out),
            card=str(card),
            created_at=datetime.now(UTC),
            tool_version=__version__,
            atif_version=ATIF_VERSION if fmt == "atif" else None,
            filters=filters,
            selected=found.selected,
            exported=found.exported,
            duplicates=found.duplicates,
            left_out=LeftOut(**found.left),
            by_task=dict(found.by["task"]),
            by_category=dict(by_category),
            by_harness=dict(found.by["harness"]),
            by_kind=dict(found.by["kind"]),
        )
        text = render_card(summary, None if fmt == "atif" else out.name)
        if isinstance(writer, AtifDirWriter):
            writer.add_card(text)
        elif card_file is not None:
            card_file.handle.write(text)
        writer.close()
        if card_file is not None:
            card_file.commit()
    except BaseException:
        writer.abort()
        if card_file is not None:
            card_file.abort()
        raise
    return summary


__all__ = ["ExportError", "export", "preview"]
