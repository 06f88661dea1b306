"""Corpus text as the studio shows it. A stranger's trajectory, task id or reviewer name can hold bidi controls
(U+202E turns `rtl-<U+202E>gnp.exe` into `…exe.png` on screen), zero-width and other invisible characters,
and terminal escapes: shown as they are, the page would show something other than what is stored. The studio
writes them as escapes (``\\u202e``, ``\\x1b``), as the CLI does (`rsr_core.errors.terminal_safe`); newlines and
tabs are kept, and a CRLF line end is a line end."""

from __future__ import annotations

import re

from rsr_core.errors import terminal_safe

_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&\"'=^%@/,;?])")


def shown(text: str) -> str:
    """`text` with every control, bidi and invisible format character but newline and tab written as its
    escape."""
    if text.isprintable():
        return text
    return terminal_safe(text.replace("\r\n", "\n"))


def md_escape(text: str) -> str:
    """Markdown-safe text: every ASCII punctuation character is escaped, so nothing is interpreted, and
    invisible characters are shown as escapes (`shown`)."""
    return _PUNCT.sub(r"\\\1", shown(text))
