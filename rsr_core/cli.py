"""The `rsr` command: builds the parser from the command modules and dispatches."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from rsr_core import __version__
from rsr_core.commands import COMMAND_MODULES
from rsr_core.llm.client import LLMError
from rsr_core.sandbox.engine import DockerUnavailable
from rsr_core.sandbox.images import ImageError
from rsr_core.settings import Settings
from rsr_core.store import StoreBusyError, StoreVersionError


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
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    try:
        return int(args.handler(args, settings) or 0)
    except (StoreBusyError, StoreVersionError, DockerUnavailable, LLMError, ImageError) as exc:
        print(f"rsr: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rsr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`rsr show … | head`): stop quietly, and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
