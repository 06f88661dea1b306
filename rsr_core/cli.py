"""The `rsr` command: builds the parser from the command modules and dispatches.

Only argparse and the command modules' light top levels are imported to build the parser (`rsr --help` stays
fast); each command imports the engines it uses when it runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import NoReturn

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


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwound like Ctrl-C, so that what the command was writing is removed (a
    killed export left its hidden temporary files behind)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


def _on_termination() -> dict[int, object]:
    """Turn SIGTERM and SIGHUP into `Terminated` for the command's run; returns the handlers replaced (commands
    that run jobs install their own, which cancel after the units in flight)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}


def _end_now(line: str, status: int) -> NoReturn:
    """After an interruption everything the command was writing has been unwound: say so and end now, rather
    than wait at exit for helper threads (a process pool's) left waiting on processes the same signal ended."""
    print(line, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script: a user-facing failure is one line and exit status 2, a bug is a
    traceback with a hint to report it."""
    parser = build_parser()
    args = parser.parse_args(argv)
    replaced = _on_termination()
    try:
        from rsr_core.settings import Settings

        settings = Settings.from_env()
        return int(args.handler(args, settings) or 0)
    except RsrError as exc:
        print(f"rsr: {printable(str(exc))}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("rsr: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        _end_now(f"rsr: terminated ({signal.Signals(exc.signum).name})", 128 + exc.signum)
    except BrokenPipeError:
        # The reader went away (`rsr show … | head`): stop quietly, and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception:  # noqa: BLE001 - a bug: show everything, and say so
        traceback.print_exc()
        print(REPORT_HINT, file=sys.stderr)
        return 3
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
