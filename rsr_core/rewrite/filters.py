"""The commands whose output is a pure function of their arguments and input, for shellnorm: echo, printf, cat
of files written earlier, tee, and filters that only re-encode (base64 -d, base32 -d, xxd -r -p, rev, tr).
Any other command passes its input through unchanged (grep, sort, head … keep most of what they read)."""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING

from rsr_core.rewrite.decode import unescape

if TYPE_CHECKING:
    from rsr_core.rewrite.shellrun import ShellView

MAX_RANGE = 1024  # a tr range wider than this is not a re-encoding worth following
_SPEC = re.compile(r"%(%|[-+ #0]*\d*(?:\.\d+)?([sbdicxXo]))")


def _convert(kind: str, arg: str) -> str:
    if kind == "b":
        return unescape(arg)
    if kind == "c":
        return arg[:1]
    if kind in "dixXo":
        try:
            n = int(arg, 0) if arg else 0
        except ValueError:
            return arg
        spec = {"d": "{:d}", "i": "{:d}", "x": "{:x}", "X": "{:X}", "o": "{:o}"}[kind]
        return spec.format(n)
    return arg


def _format_once(fmt: str, args: list[str]) -> tuple[str, int]:
    """One pass of the format over `args`: the text and how many arguments it used."""
    out, used, pos = [], 0, 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos : m.start()])
        pos = m.end()
        if m.group(1) == "%":
            out.append("%")
            continue
        out.append(_convert(m.group(2), args[used] if used < len(args) else ""))
        used += 1
    out.append(fmt[pos:])
    return "".join(out), used


def printf(args: list[str]) -> str:
    """bash printf with %s %b %d %i %c %x %o (widths ignored), reusing the format while arguments remain."""
    if not args:
        return ""
    fmt, rest = unescape(args[0]), list(args[1:])
    out: list[str] = []
    while True:
        text, used = _format_once(fmt, rest)
        out.append(text)
        rest = rest[used:]
        if not rest or not used:
            return "".join(out)


def _echo(args: list[str]) -> str:
    newline = True
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        args = args[1:]
    # dash's echo decodes escapes without -e; decoding always covers both shells.
    return unescape(" ".join(args)) + ("\n" if newline else "")


def _tr_set(spec: str) -> str:
    classes = {
        "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
        "[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "[:digit:]": "0123456789",
        "[:space:]": " \t\n\r\f\v",
    }
    for name, chars in classes.items():
        spec = spec.replace(name, chars)
    spec = unescape(spec)
    out, i = [], 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-" and 0 <= ord(spec[i + 2]) - ord(spec[i]) <= MAX_RANGE:
            out += [chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1)]
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


def _tr(args: list[str], data: str) -> str:
    flags = [a for a in args if a.startswith("-") and len(a) > 1]
    sets = [_tr_set(a) for a in args if a not in flags]
    if any("d" in f for f in flags) and sets:
        return "".join(c for c in data if c not in sets[0])
    if len(sets) == 2 and sets[0] and sets[1]:
        target = sets[1] + sets[1][-1] * max(0, len(sets[0]) - len(sets[1]))
        return data.translate(str.maketrans(sets[0], target[: len(sets[0])]))
    return data


def _decode(kind: str, data: str) -> str:
    compact = re.sub(r"\s", "", data)
    try:
        if kind == "base64":
            raw = base64.b64decode(compact + "=" * (-len(compact.rstrip("=")) % 4))
        elif kind == "base32":
            raw = base64.b32decode(compact + "=" * (-len(compact.rstrip("=")) % 8))
        else:
            raw = bytes.fromhex(compact)
    except (binascii.Error, ValueError):
        return ""
    return raw.decode("utf-8", "replace")


def run(words: list[str], stdin: str | None, view: ShellView) -> str | None:
    """A command's output when it can be known from its words and input; otherwise its input passed through."""
    if not words:
        return stdin
    name, args = words[0].rsplit("/", 1)[-1], words[1:]
    decoding = {"-d", "--decode", "-D"} & set(args)
    if name == "echo":
        return _echo(args)
    if name == "printf":
        if len(args) > 2 and args[0] == "-v":
            view.env[args[1]] = printf(args[2:])
            return None
        return printf(args)
    if name == "cat":
        files = [a for a in args if not a.startswith("-")]
        if files:
            return "".join(view.files.get(f, "") if f != "-" else stdin or "" for f in files)
        return stdin
    if name == "tee":
        for f in (a for a in args if not a.startswith("-")):
            previous = view.files.get(f, "") if "-a" in args else ""
            view.files[f] = previous + (stdin or "")
        return stdin
    if stdin is None:
        return None
    if name == "openssl" and "base64" in args and "-d" in args:
        name = "base64"
    if name in ("base64", "base32") and decoding:
        view.notes.add(f"{name} -d")
        return _decode(name, stdin)
    xxd_flags = "".join(a.lstrip("-") for a in args if a.startswith("-"))
    if name == "xxd" and "r" in xxd_flags and "p" in xxd_flags:
        view.notes.add("xxd -r -p")
        return _decode("hex", stdin)
    if name == "rev":
        view.notes.add("rev")
        return "\n".join(line[::-1] for line in stdin.split("\n"))
    if name == "tr":
        view.notes.add("tr")
        return _tr(args, stdin)
    return stdin
