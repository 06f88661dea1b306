"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rsr_core.settings import Settings
from rsr_core.store import Store, StoreBusyError


def add_db(parser: argparse.ArgumentParser) -> None:
    """The --db option every command that touches the store takes."""
    parser.add_argument("--db", help="DuckDB file (default: $RSR_DB, else data/rsr.duckdb)")


def add_json(parser: argparse.ArgumentParser) -> None:
    """The --json option."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def open_store(args: argparse.Namespace, settings: Settings, read_only: bool = False) -> Store:
    """The store named by --db, else by the settings.

    Readers open read-write when they can (so migrations apply and a missing file is created) and fall back
    to read-only when another reader holds the file; a writer elsewhere gives a clear StoreBusyError.
    """
    path = args.db or settings.db_path
    try:
        return Store(path)
    except StoreBusyError as busy:
        if not read_only:
            raise
        try:
            return Store(path, read_only=True)
        except Exception:  # noqa: BLE001 - the busy error is the one worth reporting
            raise busy from None


def emit(args: argparse.Namespace, payload: Any, text: str | None = None) -> None:
    """Print JSON when --json was given, else the human text (or indented JSON)."""
    if getattr(args, "json", False) or text is None:
        json.dump(payload, sys.stdout, indent=None if getattr(args, "json", False) else 2, default=str)
        sys.stdout.write("\n")
    else:
        print(text)
