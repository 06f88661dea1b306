"""The `rsr` command: builds the parser from the command modules and dispatches.

Only argparse and the command modules' light top levels are imported to build the parser (`rsr --help` stays
fast); each command imports the engines it uses when it runs. Ctrl-C at any moment is one line, "rsr:
interrupted", and exit status 130: while this module loads, through `_interrupted_early`; then inside `main`,
which also imports the command modules.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_early(signum: int, frame: object) -> None:
    """Ctrl-C while `rsr` is still loading: nothing has started, so end at once (a KeyboardInterrupt here would
    be a traceback from the middle of an import)."""
    os.write(2, b"rsr: interrupted\n")
    os._exit(130)


# Only as the process's own program (the console script, `python -m rsr_core.cli`), never when imported by a
# program of its own (a test runner keeps its Ctrl-C); an ignored SIGINT (a background job) stays ignored.
if (__name__ == "__main__" or os.path.basename(sys.argv[0]) == "rsr") and signal.getsignal(
    signal.SIGINT
) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_early)

import argparse  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from typing import Any, NoReturn  # noqa: E402

from rsr_core import __version__  # noqa: E402
from rsr_core.errors import RsrError, printable  # noqa: E402

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
    from rsr_core.commands import COMMAND_MODULES

    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwound like Ctrl-C, so that what the command was writing is removed (a
    killed export would otherwise leave its hidden temporary files behind)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_POPEN_FORK = os.path.join("multiprocessing", "popen_fork.py")
_SIGNALLED: list[int] = []  # signals that reached `_signalled` during the command, in order


def _signalled(signum: int, frame: object) -> None:
    """Ctrl-C, SIGTERM and SIGHUP during a command: remembered, then unwound as KeyboardInterrupt or
    `Terminated`. Remembered because what unwinds may not be that exception: DuckDB cancels a query the signal
    lands in and raises its own ("Query interrupted"), and an import it lands in can fail in its own way."""
    _SIGNALLED.append(signum)
    exc: BaseException = KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)
    launch = _forking(frame)
    if launch is not None:
        _raise_in(launch, exc, only_in=os.getpid())  # once the fork is done, in this process only
        return
    caller = _importer(frame)
    if caller is not None:
        _raise_in(caller, exc)
        return
    raise exc


def _forking(frame: Any) -> Any:
    """The multiprocessing frame calling `os.fork` when the signal landed in Python code the fork runs (at-fork
    hooks such as logging's, a warning about threads), else None: an exception raised there is printed as
    ignored and dropped."""
    innermost = frame
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_launch" and code.co_filename.endswith(_POPEN_FORK):
            inside = frame is not innermost and getattr(frame.f_locals.get("self"), "pid", None) is None
            return frame if inside else None
        frame = frame.f_back
    return None


def _importer(frame: Any) -> Any:
    """The frame whose `import` the signal landed in (None: it landed outside any import). An extension
    module's initialisation can swallow an exception raised inside it and print it ("Exception ignored in …",
    with a traceback) instead of letting it unwind."""
    chain = []
    while frame is not None:
        chain.append(frame)
        frame = frame.f_back
    outermost = max(
        (i for i, f in enumerate(chain) if f.f_code.co_filename.startswith("<frozen importlib")), default=None
    )
    return chain[outermost + 1] if outermost is not None and outermost + 1 < len(chain) else None


def _raise_in(frame: Any, exc: BaseException, only_in: int | None = None) -> None:
    """Raise `exc` in `frame` as soon as it runs again (its next line, or its return), once what it called has
    finished: a trace function on that frame alone. With `only_in`, a forked child that inherited the trace
    drops it."""

    def at_next_line(f: Any, event: str, arg: object) -> Any:
        sys.settrace(None)
        frame.f_trace = None
        if only_in is None or os.getpid() == only_in:
            raise exc

    frame.f_trace_lines = True
    frame.f_trace = at_next_line
    sys.settrace(lambda *_: None)  # frame-local trace functions run only while a global one is set


def _unraisable(hook_args: Any) -> None:
    """`sys.unraisablehook` during a command. A signal that lands in code Python runs where an exception cannot
    unwind (a weakref callback such as a WeakValueDictionary's removal, a `__del__`) has its exception printed
    as ignored and dropped: it is raised again in the frame that was running, at its next line. Anything else
    is reported as Python reports it."""
    exc = hook_args.exc_value
    if isinstance(exc, KeyboardInterrupt | Terminated) and _SIGNALLED:
        try:
            caller = sys._getframe(1)  # noqa: SLF001 - the frame whose work set off the callback
        except ValueError:  # none (C code alone was running): the command sees `_SIGNALLED` when it returns
            return
        _raise_in(caller, exc)
        return
    _unraisable_before(hook_args)


_unraisable_before = sys.__unraisablehook__
"""The unraisable hook `_unraisable` replaced for the command (Python's own, or a test runner's)."""


def _interruption(exc: BaseException) -> bool:
    """Is `exc` DuckDB's report of a signal that landed during a query (an `InterruptException`, or a
    RuntimeError "Query interrupted")? duckdb is looked up, not imported: a command that never used it cannot
    have been interrupted inside it."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(exc, getattr(duckdb, "InterruptException", ())):
        return True
    return isinstance(exc, RuntimeError) and "query interrupted" in str(exc).lower()


def _tidy() -> None:
    """After an interruption: remove the temporary outputs an unwinding could not reach (a signal that landed
    between creating one and taking charge of it), and DuckDB's spill directory."""
    outputs = sys.modules.get("rsr_core.outputs")
    if outputs is not None:
        outputs.remove_leftovers()
    host = sys.modules.get("rsr_core.store.host")
    if host is not None:
        host.remove_spill_directory()


def _on_signals() -> dict[int, object]:
    """Route Ctrl-C, SIGTERM and SIGHUP through `_signalled` for the command's run; returns the handlers
    replaced (commands that run jobs install their own, which cancel after the units in flight). An ignored
    SIGINT (a background job of a shell) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced: dict[int, object] = {
        sig: signal.signal(sig, _signalled) for sig in (signal.SIGTERM, signal.SIGHUP)
    }
    current = signal.getsignal(signal.SIGINT)
    if current is signal.default_int_handler or current is _interrupted_early:
        replaced[signal.SIGINT] = signal.signal(signal.SIGINT, _signalled)
    global _unraisable_before
    if sys.unraisablehook is not _unraisable:
        _unraisable_before = sys.unraisablehook
        sys.unraisablehook = _unraisable
    return replaced


def _end_now(line: str, status: int) -> NoReturn:
    """After an interruption everything the command was writing has been unwound: say so and end now, rather
    than wait at exit for helper threads (a process pool's) left waiting on processes the same signal ended."""
    print(line, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _interrupted(signum: int, own_process: bool) -> int:
    """A signal ended the command: one line and its exit status (130 for Ctrl-C, 128 + the signal otherwise).
    The process's own command ends at once (its exit handlers could meet a second Ctrl-C); a termination
    always does (see `_end_now`)."""
    _tidy()
    if signum == signal.SIGINT:
        if own_process:
            _end_now("rsr: interrupted", 130)
        print("rsr: interrupted", file=sys.stderr)
        return 130
    _end_now(f"rsr: terminated ({signal.Signals(signum).name})", 128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script: a user-facing failure is one line and its exit status (2 unless
    the error says otherwise), a bug is a traceback with a hint to report it (exit status 3); Ctrl-C at any
    moment is one line and exit status 130."""
    own = argv is None  # the process's own command line (the console script, `python -m rsr_core.cli`)
    replaced: dict[int, object] = {}
    _SIGNALLED.clear()
    try:
        replaced = _on_signals()
        args = build_parser().parse_args(argv)
        from rsr_core.outputs import uninterrupted

        # pydantic_core (Rust) panics when Ctrl-C lands in its import, and writes a panic report to stderr
        with uninterrupted():
            from rsr_core.settings import Settings

        settings = Settings.from_env()
        status = int(args.handler(args, settings) or 0)
        if _SIGNALLED:  # a signal the command's own error handling took for a failure of its work
            return _interrupted(_SIGNALLED[-1], own)
        return status
    except SystemExit:
        raise
    except BaseException as exc:
        if _SIGNALLED or isinstance(exc, KeyboardInterrupt | Terminated) or _interruption(exc):
            last = _SIGNALLED[-1] if _SIGNALLED else signal.SIGINT
            return _interrupted(exc.signum if isinstance(exc, Terminated) else last, own)
        if isinstance(exc, RsrError):
            print(f"rsr: {printable(str(exc))}", file=sys.stderr)
            return exc.exit_status
        if isinstance(exc, BrokenPipeError):
            # The reader went away (`rsr show … | head`): stop quietly, and keep Python from complaining at exit.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 0
        if not isinstance(exc, Exception):
            raise
        traceback.print_exc()  # a bug: show everything, and say so
        print(REPORT_HINT, file=sys.stderr)
        return 3
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        if sys.unraisablehook is _unraisable:
            sys.unraisablehook = _unraisable_before
        if own and threading.current_thread() is threading.main_thread():
            # The command is over; what remains is the interpreter's exit, which a late Ctrl-C would fill with
            # tracebacks of its exit handlers.
            signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
