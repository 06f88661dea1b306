"""Command extraction and normalisation: "the commands of a trajectory" as the README's Analysis section
defines them.

Shared by ingest (commands are stored normalised) and analysis (which never re-parses JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TMUX_KEY_NAMES = frozenset(
    {"C-c", "C-d", "C-z", "Escape", "Enter", "Tab", "Up", "Down", "Left", "Right", "BSpace", "q"}
)


def normalise_segment(segment: str) -> str | None:
    """One keystroke line -> a command, or None when the line is not a command.

    Trailing whitespace is removed and inner runs of whitespace become one space; empty lines and
    lines that are only a tmux key name are dropped. (`str.split()` and the regex class `\\s` agree on what
    whitespace is, so splitting on it collapses exactly the inner runs; leading whitespace is kept.)
    """
    text = segment.rstrip()
    if not text:
        return None
    body = text.lstrip()
    if body in TMUX_KEY_NAMES:
        return None
    words = body.split()
    if len(words) == 1:
        return text
    return text[: len(text) - len(body)] + " ".join(words)


def split_commands(keystrokes: str) -> list[str]:
    """All commands in one keystroke batch, in order."""
    out = []
    for segment in keystrokes.split("\n"):
        cmd = normalise_segment(segment)
        if cmd is not None:
            out.append(cmd)
    return out


def keystrokes_of_call(arguments: Mapping[str, Any] | Any) -> str | None:
    """The keystroke text of one tool call: Terminus `keystrokes`, else `command`, else `cmd`."""
    if not isinstance(arguments, Mapping):
        return None
    for key in ("keystrokes", "command", "cmd"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None
