"""Signals for the processes tests start."""

from __future__ import annotations

import signal


def sigint_default() -> None:
    """`preexec_fn` of a child that a test sends SIGINT: Ctrl-C at its default, so that the child's Python turns
    it into KeyboardInterrupt. A shell starts background jobs with SIGINT ignored and the child would inherit
    that (a test suite run with `&` saw its interrupted children run on to the end)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
