"""`rsr demo build`."""

from __future__ import annotations

import argparse
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
