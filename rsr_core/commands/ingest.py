"""`rsr ingest`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from rsr_core.commands.common import TerminalProgress, add_db, add_json, bounded_int, emit, open_store
from rsr_core.errors import printable
from rsr_core.vocabulary import KINDS

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command."""
    p = sub.add_parser(
        "ingest",
        help="store trajectories and tasks from files and directories",
        description="Ingest ATIF trajectory.json files, harbor job/trial/task dirs and Terminal-Bench 1 "
        "run/task dirs (walked recursively, never through a symlink leading outside the paths given). A file "
        "is stored whole or not at all; ingesting twice adds nothing.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to ingest")
    add_db(p)
    p.add_argument(
        "--harness", help="harness of these runs (default: extra.rsr.harness, else the agent name)"
    )
    p.add_argument(
        "--kind", choices=KINDS, help="kind of these runs (default: extra.rsr.kind, else discovery)"
    )
    p.add_argument(
        "--workers",
        type=bounded_int(0, 256),
        default=None,
        help="parser processes, used from 64 files on; they end with this command (default: up to 4)",
    )
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Ingest and report."""
    from rsr_core.ingest.runner import ingest_paths

    store = open_store(args, settings)
    progress = TerminalProgress(args, "ingest", "file")
    try:
        report = ingest_paths(
            store,
            args.paths,
            harness=args.harness,
            kind=args.kind,
            workers=args.workers,
            on_progress=progress,
        )
    finally:
        progress.close()
    # Hook: training keys of rows stored before they were kept, and the similarity pairs of the tasks whose
    # rewrites changed (each a query when there is nothing to do).
    from rsr_core.jobs.derived import refresh_after_write

    refresh_after_write(store, processes=min(2, os.cpu_count() or 1))
    payload = report.model_dump()
    if args.json:
        emit(args, payload)
    else:
        for err in report.errors:
            print(f"error: {printable(err.path)}: {printable(err.error)}", file=sys.stderr)
        print(
            f"{report.files} files: {report.trajectories_added} trajectories added, "
            f"{report.duplicates} duplicates, {report.tasks_added} tasks added, {len(report.errors)} errors"
        )
    return 1 if report.errors else 0
