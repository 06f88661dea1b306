"""The one base of the errors a user can act on. The CLI turns an `RsrError` into one line on stderr and exit
status 2 (or 1 where a command says so); anything else is a bug and keeps its traceback.

Light on purpose (no third-party imports): `rsr --help` must not pay for the engines it does not use.
"""

from __future__ import annotations


class RsrError(Exception):
    """A failure the user can act on; its message is one line naming the thing and the problem."""


class SandboxFailure(RsrError):
    """The sandbox stopped working under the harness (its shell, terminal or container)."""
