"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rsr_core.errors import terminal_safe

if TYPE_CHECKING:
    from rsr_core.settings import Settings
    from rsr_core.store import Store


def bounded_int(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse `type`: a whole number from `lo` to `hi` (argparse turns a refusal into one line and exit
    status 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"expected a whole number from {lo:,} to {hi:,}, got {text[:40]!r}"
            )
        return value

    parse.__name__ = "integer"
    return parse


def finite_float(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse `type`: a finite number from `lo` to `hi` (`inf`, `nan` and `1e309` are refused)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and lo <= value <= hi):
            raise argparse.ArgumentTypeError(f"expected a number from {lo:g} to {hi:g}, got {text[:40]!r}")
        return value

    parse.__name__ = "number"
    return parse


def add_db(parser: argparse.ArgumentParser) -> None:
    """The --db option every command that touches the store takes."""
    parser.add_argument("--db", help="DuckDB file (default: $RSR_DB, else data/rsr.duckdb)")


def add_json(parser: argparse.ArgumentParser) -> None:
    """The --json option."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def open_store(args: argparse.Namespace, settings: Settings, read_only: bool = False) -> Store:
    """The store named by --db, else by the settings. Nothing holds the file between uses; when another
    process has it open, the command waits up to RSR_DB_WAIT seconds (saying so on stderr) and then fails with
    the holder's name. `read_only` is accepted for the readers' sake and changes nothing."""
    from rsr_core.store import Store

    path = args.db or settings.db_path
    return Store(
        path, wait_s=settings.db_wait_s, on_wait=lambda m: print(f"rsr: {m}", file=sys.stderr, flush=True)
    )


def emit(args: argparse.Namespace, payload: Any, text: str | None = None) -> None:
    """Print JSON when --json was given, else the human text (or indented JSON)."""
    if getattr(args, "json", False) or text is None:
        json.dump(payload, sys.stdout, indent=None if getattr(args, "json", False) else 2, default=str)
        sys.stdout.write("\n")
    else:
        print(terminal_safe(text))


class TerminalProgress:
    """A progress bar on stderr for long commands (ingest, export): shown only on a terminal and never with
    --json, so logs and pipes stay clean. Call it with (done, total); close it when the work ends."""

    def __init__(self, args: argparse.Namespace, label: str, unit: str):
        self.enabled = sys.stderr.isatty() and not getattr(args, "json", False)
        self.label, self.unit = label, unit
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            import shutil

            from tqdm import tqdm

            # A terminal that reports no size (some multiplexers, a fresh pty) still gets a bar of usual width.
            size = shutil.get_terminal_size((100, 24))
            self._bar = tqdm(
                total=total,
                desc=self.label,
                unit=self.unit,
                file=sys.stderr,
                leave=False,
                ncols=size.columns,
                nrows=size.lines,
            )
        self._bar.total = max(total, done)
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
