"""The one base of the errors a user can act on. The CLI turns an `RsrError` into one line on stderr and exit
status 2 (or 1 where a command says so); anything else is a bug and keeps its traceback.

Light on purpose (no third-party imports): `rsr --help` must not pay for the engines it does not use.
"""

from __future__ import annotations


class RsrError(Exception):
    """A failure the user can act on; its message is one line naming the thing and the problem."""

    exit_status = 2
    """The CLI's exit status for it (1 for a path refused as given)."""


class SandboxFailure(RsrError):
    """The sandbox stopped working under the harness (its shell, terminal or container)."""


def printable(text: str) -> str:
    """`text` for one line of a terminal: control characters (newlines, escape sequences, bell), line and
    paragraph separators, invisible format characters and undecodable bytes of a file name are written as
    escapes (``\\n``, ``\\x1b``, ``\\u202e``, ``\\xff``), so a hostile name can neither break the line nor drive
    the terminal."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch.isprintable():
            out.append(ch)
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch == " ":
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def terminal_safe(text: str) -> str:
    """Multi-line `text` for a terminal: as `printable`, but newlines and tabs are kept (a stranger's
    trajectory can hold escape sequences that clear the screen, retitle the window or write the clipboard)."""
    if text.isprintable():
        return text
    return "\n".join("\t".join(printable(part) for part in line.split("\t")) for line in text.split("\n"))
