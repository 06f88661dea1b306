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
from rsr_core.export.models import (
    ATIF_VERSION,
    CardMeta,
    ExportFilters,
    ExportFormat,
    ExportPreview,
    ExportSummary,
    LeftOut,
)
from rsr_core.export.writers import AtifDirWriter, ExportError, HfDirWriter, RowWriter, open_writer
from rsr_core.formats.training import TRAINING_RULE, Rows, messages_key, training_row, training_rows
from rsr_core.models import Trajectory
from rsr_core.outputs import AtomicFile, output_path, uninterrupted
from rsr_core.store import Store
from rsr_core.store import export_queries as eq
from rsr_core.store.export_stream import stream_selected
from rsr_core.vocabulary import export_format

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
    eligible: int = 0
    left: Counter[str] = field(default_factory=Counter)
    by: dict[str, Counter[str]] = field(
        default_factory=lambda: {k: Counter() for k in ("task", "kind", "harness")}
    )
    seen: set[bytes] = field(default_factory=set)

    def select(self, cur: duckdb.DuckDBPyConnection, filters: ExportFilters) -> None:
        """The selection and the reasons SQL finds (everything but the training row's own)."""
        for reason, _kind, _harness, n in eq.selection_counts(cur, **_selection(filters)):
            self.selected += n
            if reason is None:
                self.eligible += n
            else:
                self.left[reason] += n

    def take(self, key: bytes | None, task_id: str | None, kind: str, harness: str) -> bool:
        """Count one row that would be written, unless an earlier row had the same `key` (None: never a
        duplicate, as in an archive): then it counts as a duplicate and False is returned."""
        if key is not None:
            if key in self.seen:
                self.duplicates += 1
                return False
            self.seen.add(key)
        self.exported += 1
        self.by["task"][task_id or ""] += 1
        self.by["kind"][kind] += 1
        self.by["harness"][harness] += 1
        return True


def _run(
    store: Store,
    filters: ExportFilters,
    writer: RowWriter,
    archive: bool,
    on_progress: Progress | None,
) -> _Pass:
    """The pass behind `export`: selection reasons from SQL, then per trajectory the training messages (or why
    there are none) and the duplicate filter; rows go to `writer`."""
    with store.reading() as cur:
        return _run_on(cur, filters, writer, archive, on_progress)


def _run_on(
    cur: duckdb.DuckDBPyConnection,
    filters: ExportFilters,
    writer: RowWriter,
    archive: bool,
    on_progress: Progress | None,
) -> _Pass:
    result = _Pass()
    result.select(cur, filters)
    done = 0
    for trajectories in chunked(stream_selected(cur, **_selection(filters)), CHUNK):
        transfers, reviews = eq.carried_verdicts(cur, trajectories) if archive else ({}, {})
        instructions = (
            {} if archive else eq.task_instructions(cur, [t.task_id for t in trajectories if t.task_id])
        )
        for traj in trajectories:
            done += 1
            if archive:
                rows: Rows = [[]]
                why = None if any(s.source == "agent" for s in traj.steps) else "no_steps"
            else:
                instruction = instructions.get(traj.task_id or "")
                rows, why = training_rows(traj, instruction)
            if why is not None:
                result.left[why] += 1
                continue
            key = None if archive else messages_key([m for row in rows for m in row])
            if result.take(key, traj.task_id, traj.kind, traj.harness):
                carried = (transfers.get(traj.trajectory_id), reviews.get(traj.runbook_id or "", []))
                if filters.keep_reasoning and not archive:
                    rows, _ = training_rows(traj, instruction, reasoning=True)
                # A row per conversation (a run handed off to a fresh one has several); a file per trajectory.
                for row in rows[-1:] if writer.per_trajectory else rows:
                    writer.write(traj, row, carried if archive else None)
        if on_progress:
            on_progress(done, result.eligible)
    return result


def _worked_out(
    cur: duckdb.DuckDBPyConnection,
    ids: list[str],
    on_progress: Progress | None,
    between: Callable[[], None] | None,
    total: int,
) -> dict[str, tuple[bytes | None, str | None]]:
    """(key, why) of the training rows the store does not hold (they depend on their task's instruction, or
    were stored before the rules' current version), worked out from the trajectories themselves."""
    out: dict[str, tuple[bytes | None, str | None]] = {}
    for start in range(0, len(ids), CHUNK):
        trajectories = eq.read_trajectories(cur, ids[start : start + CHUNK])
        instructions = eq.task_instructions(cur, [t.task_id for t in trajectories if t.task_id])
        for traj in trajectories:
            if between is not None:
                between()
            messages, why = training_row(traj, instructions.get(traj.task_id or ""))
            out[traj.trajectory_id] = (None if why is not None else messages_key(messages), why)
        if on_progress:
            on_progress(len(out), total)
    return out


def _count(
    cur: duckdb.DuckDBPyConnection,
    filters: ExportFilters,
    on_progress: Progress | None,
    between: Callable[[], None] | None,
) -> _Pass:
    """The same counts as the export's pass, from what the store keeps of every training row (its key, or why
    there is none, from when it was written): only the rows it cannot keep are built here."""
    result = _Pass()
    result.select(cur, filters)
    rows = eq.training_rows(cur, **_selection(filters)).to_pylist()
    archive = filters.all_trajectories
    missing = [] if archive else [r["trajectory_id"] for r in rows if not _stored(r)]
    computed = _worked_out(cur, missing, on_progress, between, len(missing))
    for r in rows:
        if archive:
            key, why = None, None if r["agent_steps"] else "no_steps"
        else:
            key, why = computed.get(r["trajectory_id"]) or (r["training_key"], r["training_why"])
        if why is not None:
            result.left[why] += 1
        else:
            result.take(key, r["task_id"], r["kind"], r["harness"])
    if on_progress:
        on_progress(len(rows), len(rows))
    return result


def _stored(row: dict) -> bool:
    """Does the store hold this row's training key (or why it has none) under the current rules?"""
    return row["training_rule"] == TRAINING_RULE and (
        row["training_key"] is not None or row["training_why"] is not None
    )


def preview(
    store: Store,
    filters: ExportFilters | None = None,
    on_progress: Progress | None = None,
    between: Callable[[], None] | None = None,
) -> ExportPreview:
    """Exactly what `export` with these filters would write, nothing written: rows, duplicates and every
    left-out reason. Counted in SQL from the training keys the store keeps; the few rows it cannot keep (see
    `_worked_out`) are built, and `between` is called between them (a count in the background of a server lets
    the server's own threads run there)."""
    filters = filters or ExportFilters()
    with store.reading() as cur:
        found = _count(cur, filters, on_progress, between)
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
    meta: CardMeta | None = None,
) -> ExportSummary:
    """Write the trajectories the filters select to `out` in `fmt`, with a dataset card (see `card_path`;
    `meta`: its license, task categories and tags).

    Exact duplicates (same training messages) are dropped, the first in export order kept; an `atif` export
    with `all_trajectories` is an archive and keeps every trajectory, every step and the pipeline verdicts.
    An existing output is replaced only with `force` (rsr_core/outputs.py); the output and its card appear
    only when complete.
    """
    filters = filters or ExportFilters()
    directory = export_format(fmt).directory
    out = output_path(out, directory=directory)
    archive = fmt == "atif" and filters.all_trajectories
    card = card_path(out, fmt)
    writer = open_writer(fmt, out, full=archive, force=force)
    try:
        card_file = None if directory else AtomicFile(card, force)
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
        text = render_card(summary, meta, calls=writer.calls)
        if isinstance(writer, AtifDirWriter | HfDirWriter):
            writer.add_card(text)
        elif card_file is not None:
            card_file.handle.write(text)
        with uninterrupted():  # the output and its card appear together, or neither does
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
