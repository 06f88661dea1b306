"""The `rsr` command: builds the parser from the command modules and dispatches.

Only argparse and the command modules' light top levels are imported to build the parser (`rsr --help` stays
fast); each command imports the engines it uses when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from rsr_core import __version__
from rsr_core.commands import COMMAND_MODULES
from rsr_core.errors import RsrError, printable

REPORT_HINT = (
    "rsr: this is a bug in RSR Studio, not something you did; please report it with the command you ran and "
    "the traceback above"
)


def build_parser() -> argparse.ArgumentParser:
    """The full `rsr` parser (every command and subcommand has help text)."""
    parser = argparse.ArgumentParser(
        prog="rsr",
        description="RSR Studio: ingest, discover, rewrite, analyse and export terminal-agent trajectories.",
    )
    parser.add_argument("--version", action="version", version=f"rsr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script: a user-facing failure is one line and exit status 2, a bug is a
    traceback with a hint to report it."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        from rsr_core.settings import Settings

        settings = Settings.from_env()
        return int(args.handler(args, settings) or 0)
    except RsrError as exc:
        print(f"rsr: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rsr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`rsr show … | head`): stop quietly, and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception:  # noqa: BLE001 - a bug: show everything, and say so
        traceback.print_exc()
        print(REPORT_HINT, file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
