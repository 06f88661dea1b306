"""What an observation shows a person reading the screen: colours and cursor codes gone, zero-width and
look-alike characters folded, lines the terminal (or `fold`) wrapped joined again, and byte dumps (`od -c`,
`xxd`, `hexdump -C`) read back into the text they dump. A run that saw a value in any of these forms saw it.
"""

from __future__ import annotations

import re
import unicodedata

# CSI (colours, cursor moves), OSC (titles, links: ended by BEL or ST) and two-character escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
# Hyphens and spaces that look like '-' and ' ' but NFKC keeps apart.
_CONFUSABLES = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2796\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009", " "),
        **dict.fromkeys("\u200a\u202f\u205f\u3000", " "),
    }
)
# Widths a terminal wraps at: the harness's tmux window and the usual defaults.
_TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 160, 200})
_OD_OFFSET = re.compile(r"^[0-7]{7,}")
_OD_CELL = re.compile(r" {3}\S| {2}\\.| [0-7]{3}| {4}")  # `od -c` prints every byte in four columns
_OD_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\0": "\0", "\\r": "\r", "\\a": "\a", "\\b": "\b", "\\f": "\f"}
_OD_ESCAPES |= {"\\v": "\v", "\\\\": "\\"}
_XXD_LINE = re.compile(r"^[0-9a-f]{6,16}:?((?:\s+[0-9a-f]{2,4})+)(?:\s{2,}\|?.*)?$", re.IGNORECASE)


def screen_text(text: str) -> str:
    """The text as the screen shows it: escapes removed, compatibility forms and look-alikes folded, invisible
    characters dropped, carriage returns read as line ends."""
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFKC", text)
    return _INVISIBLE.sub("", text).translate(_CONFUSABLES)


def _unwrapped(lines: list[str]) -> str:
    # A line is wrapped when it is as long as a terminal is wide, or when it and its neighbour are of one
    # length (what `fold -w N` prints): the line after it continues it.
    out: list[str] = []
    for i, line in enumerate(lines):
        width = len(line)
        same = (i + 1 < len(lines) and len(lines[i + 1]) == width) or (i > 0 and len(lines[i - 1]) == width)
        wrapped = width > 0 and (width in _TERMINAL_WIDTHS or (same and i + 1 < len(lines)))
        out.append(line if wrapped or i + 1 == len(lines) else line + "\n")
    return "".join(out)


def _od_text(lines: list[str]) -> str:
    data = bytearray()
    for line in lines:
        cells = _OD_OFFSET.sub("", line)
        if not cells.strip():
            continue
        cells += " " * (-len(cells) % 4)  # the terminal drops trailing blanks
        chunks = [cells[i : i + 4] for i in range(0, len(cells), 4)]
        if not all(_OD_CELL.fullmatch(c) for c in chunks):
            continue
        for chunk in chunks:
            cell = chunk.strip() or " "
            if cell in _OD_ESCAPES:
                data += _OD_ESCAPES[cell].encode()
            elif len(cell) == 3:
                data.append(int(cell, 8) & 0xFF)
            else:
                data += cell.encode()
    return data.decode(errors="replace")


def _hex_text(lines: list[str]) -> str:
    data = bytearray()
    for line in lines:
        m = _XXD_LINE.match(line.strip())
        if m:
            data += bytes.fromhex("".join(m.group(1).split()))
    return data.decode(errors="replace")


def screen_views(text: str) -> list[str]:
    """The readings of an observation a person makes: the screen text, its wrapped lines joined, and the
    text its byte dumps hold (each only when it differs)."""
    shown = screen_text(text)
    lines = shown.split("\n")
    views = [shown]
    for extra in (_unwrapped(lines), _od_text(lines), _hex_text(lines)):
        if extra.strip() and all(extra.rstrip("\n") != v.rstrip("\n") for v in views):
            views.append(extra)
    return views
