"""`rsr demo build` and `rsr demo record`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rsr_core.commands.common import add_db, add_json, emit, open_store

if TYPE_CHECKING:
    from rsr_core.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command group."""
    p = sub.add_parser("demo", help="the demo corpus", description="The demo corpus shipped in data/demo.")
    s = p.add_subparsers(dest="demo_command", metavar="WHAT", required=True)
    b = s.add_parser(
        "build",
        help="build the demo database from data/demo when it is empty",
        description="Ingest the demo tasks and recorded runs of data/demo into the database (only "
        "when it holds nothing yet, unless --force).",
    )
    b.add_argument("--force", action="store_true", help="ingest even when the database is not empty")
    add_db(b)
    add_json(b)
    b.set_defaults(handler=build)
    r = s.add_parser(
        "record",
        help="regenerate the demo's runs with the scripted demo model in real sandboxes",
        description="Build the scripted demo model (data/scripted/demo_model.json) from its answers in "
        "data/demo/script, then run every discovery harness on every demo task and the recording's rewrite "
        "jobs in real Docker sandboxes against it, replacing data/demo/jobs and data/demo_pipeline. Every "
        "observation is real terminal output; every model answer is scripted.",
    )
    r.add_argument(
        "--only",
        choices=["script", "discovery", "rewrite"],
        help="only rebuild the model script (no Docker), or record only the discovery runs or only the "
        "rewrite jobs (on the recorded discovery runs)",
    )
    r.add_argument(
        "--data",
        type=Path,
        help="the data directory to regenerate (default: the demo corpus the package reads, data/ of a "
        "checkout)",
    )
    add_json(r)
    r.set_defaults(handler=record)


def build(args: argparse.Namespace, settings: Settings) -> int:
    """Build (idempotent)."""
    from rsr_core.demo import build_demo, is_empty

    store = open_store(args, settings)
    if not args.force and not is_empty(store):
        emit(
            args,
            {"built": False, "summary": store.summary()},
            f"{store.path}: already holds data; nothing done",
        )
        return 0
    report = build_demo(store)
    emit(
        args,
        {"built": True, "report": report.model_dump(), "summary": store.summary()},
        f"{store.path}: {report.trajectories_added} trajectories, {report.tasks_added} tasks",
    )
    return 1 if report.errors else 0


def record(args: argparse.Namespace, settings: Settings) -> int:
    """Record (progress on stderr)."""
    from rsr_core.demo import demo_data
    from rsr_core.demo.record import DemoPaths, Part, record_demo

    parts: tuple[Part, ...] = (args.only,) if args.only else ("discovery", "rewrite")
    summary = record_demo(
        DemoPaths(args.data or demo_data()), parts, say=lambda line: print(line, file=sys.stderr, flush=True)
    )
    emit(args, summary, None if args.json else "\n".join(f"{k}: {v}" for k, v in summary.items()))
    return 0
