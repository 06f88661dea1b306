"""The commands whose output is a pure function of their arguments and input, for shellnorm: echo, printf, cat
of files written earlier, tee, dd, the calculators (let, expr, bc), read, readarray and set -- (into
variables), xargs, and filters that only re-encode or rewrite text (base64 -d, base32 -d, openssl base64 -d,
xxd -r [-p], rev, tr, sed s/y, perl -pe, cut, sort, tac, paste -s, envsubst; a gzip, zlib, bzip2 or xz stream
inside an encoding is inflated). Any other command passes its input through unchanged (grep, head … keep most
of what they read)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rsr_core.transfer.decode import inflate, unescape
from rsr_core.transfer.pyfold import arithmetic

if TYPE_CHECKING:
    from rsr_core.transfer.shellrun import ShellView

_XXD_LINE = re.compile(r"^\s*[0-9A-Fa-f]+:\s?((?:[0-9A-Fa-f]{2,4} ?)+)", re.M)
MAX_RANGE = 1024  # a tr range wider than this is not a re-encoding worth following
_SPEC = re.compile(r"%(%|[-+ #0]*\d*(?:\.(\d*))?([sbdicxXo]))")


_BASE_N = re.compile(r"\b(\d{1,2})#([0-9A-Za-z@_]+)")
_OCTAL = re.compile(r"(?<![\w.])0([0-7]+)\b")
_VAR = re.compile(r"\$?\{?([A-Za-z_]\w*)\}?")


def shell_arithmetic(expr: str, env: dict[str, str]) -> str | None:
    """An arithmetic expression as bash computes it (`$((…))`, `$[…]`, `let`, `expr`, `bc`): variables of the
    session, `0x…`, octal `0…` and `BASE#digits` literals."""

    def base_n(m: re.Match[str]) -> str:
        base = int(m.group(1))
        try:
            return str(int(m.group(2), base)) if 2 <= base <= 36 else m.group()
        except ValueError:
            return m.group()

    expr = _VAR.sub(lambda m: env.get(m.group(1), m.group()) if m.group(1) in env else m.group(), expr)
    expr = _OCTAL.sub(lambda m: str(int(m.group(1), 8)), _BASE_N.sub(base_n, expr))
    return arithmetic(expr.replace("\\*", "*"))


def set_positional(args: list[str], env: dict[str, str], first: int = 1) -> None:
    """Positional parameters ($1…, or $0… for `sh -c CODE ARG0 …`) as `set --` or a shell's arguments set them."""
    for k in range(10):
        env.pop(str(k), None) if k >= first else None
    for k, value in enumerate(args[: 10 - first], first):
        env[str(k)] = value


def _convert(kind: str, arg: str, precision: str | None = None) -> str:
    if kind in "sb" and precision is not None:
        return _convert(kind, arg)[: int(precision or 0)]
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
        out.append(_convert(m.group(3), args[used] if used < len(args) else "", m.group(2)))
        used += 1
    out.append(fmt[pos:])
    return "".join(out), used


def printf(args: list[str]) -> str:
    """bash printf with %s %b %d %i %c %x %o (widths ignored), reusing the format while arguments remain."""
    if not args:
        return ""
    fmt, rest = unescape(args[0], c_octal=True), list(args[1:])
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
    return inflate(raw).decode("utf-8", "replace")


def _read(args: list[str], stdin: str | None, view: ShellView) -> None:
    """`read [-r] [-a] NAME…`: the first line of its input split on IFS into the names."""
    names, i = [], 0
    while i < len(args):
        if args[i] in ("-p", "-d", "-n", "-N", "-t", "-u", "-i"):
            i += 2
            continue
        if not args[i].startswith("-"):
            names.append(args[i])
        i += 1
    if stdin is None or not names:
        return
    line = stdin.split("\n", 1)[0]
    ifs = view.env.get("IFS", " \t\n")
    if all(c in " \t\n" for c in ifs):
        fields = line.split(None, len(names) - 1) if ifs else [line]
    else:
        fields = re.split("[" + re.escape(ifs) + "]", line, maxsplit=len(names) - 1)
    for k, name in enumerate(names):
        view.env[name] = fields[k].strip() if k < len(fields) else ""


def _bre(pattern: str, extended: bool) -> str:
    """A sed regular expression as Python reads it (basic: `\\(`, `\\{`, `\\+` are the operators)."""
    if extended:
        return pattern
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "(){}+?|" else ch + nxt)
            i += 2
            continue
        out.append("\\" + ch if ch in "(){}+?|" else ch)
        i += 1
    return "".join(out)


def _sed_parts(script: str, delim: str, count: int) -> list[str] | None:
    parts: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(script) and len(parts) < count:
        ch = script[i]
        if ch == "\\" and i + 1 < len(script):
            cur.append(script[i + 1] if script[i + 1] == delim else script[i : i + 2])
            i += 2
            continue
        if ch == delim:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    return [*parts, script[i:]] if len(parts) == count else None


def _sed_replace(template: str) -> Callable[[re.Match[str]], str]:
    def expand(m: re.Match[str]) -> str:
        out, i = [], 0
        while i < len(template):
            ch = template[i]
            if ch == "\\" and i + 1 < len(template):
                nxt = template[i + 1]
                out.append((m.group(int(nxt)) or "") if nxt.isdigit() else "\n" if nxt == "n" else nxt)
                i += 2
            else:
                out.append(m.group() if ch == "&" else ch)
                i += 1
        return "".join(out)

    return expand


_NESTED_QUANTIFIER = re.compile(r"\)[*+?{]")


def _sed(args: list[str], data: str) -> str:
    """sed's `s/…/…/[gI]` and `y/…/…/` commands (the ones that rewrite text); anything else passes the text."""
    extended = any(a in ("-E", "-r", "--regexp-extended") for a in args)
    scripts = [args[k + 1] for k in range(len(args) - 1) if args[k] == "-e"]
    if not scripts:
        scripts = [a for a in args if not a.startswith("-")][:1]
    if any(a.startswith("-") and "n" in a.lstrip("-") and len(a) < 4 for a in args):
        return data  # -n prints only what it is told to
    for script in scripts:
        for cmd in re.split(r"[;\n]\s*", script.strip()):
            if len(cmd) < 4 or cmd[0] not in "sy":
                continue
            parts = _sed_parts(cmd[2:], cmd[1], 2)
            if parts is None:
                continue
            if cmd[0] == "y":
                if len(parts[0]) == len(parts[1]):
                    data = data.translate(str.maketrans(unescape(parts[0]), unescape(parts[1])))
                continue
            pattern = _bre(parts[0], extended)
            if len(pattern) > 200 or _NESTED_QUANTIFIER.search(pattern):
                continue  # no pattern that could backtrack for long
            try:
                rx = re.compile(pattern, re.I if "I" in parts[2] or "i" in parts[2] else 0)
            except re.error:
                continue
            count = 0 if "g" in parts[2] else 1
            data = "\n".join(rx.sub(_sed_replace(parts[1]), line, count=count) for line in data.split("\n"))
    return data


def _paste(args: list[str], data: str) -> str:
    flags = "".join(a.lstrip("-") for a in args if a.startswith("-") and not a.startswith("--"))
    if "s" not in flags:
        return data
    delims = "\t"
    for k, a in enumerate(args):
        if a.startswith("-") and "d" in a and not a.startswith("--"):
            rest = a[a.index("d") + 1 :]
            delims = rest if rest or k + 1 >= len(args) else args[k + 1]
    delims = unescape(delims).replace("\0", "")
    lines = data.rstrip("\n").split("\n")
    out = [lines[0]] if lines else []
    for k, line in enumerate(lines[1:]):
        out.append((delims[k % len(delims)] if delims else "") + line)
    return "".join(out) + "\n"


def _ranges(spec: str) -> list[tuple[int, int]]:
    out = []
    for part in spec.split(","):
        a, dash, b = part.partition("-")
        try:
            lo = int(a) if a else 1
            hi = (int(b) if b else 10**9) if dash else lo
        except ValueError:
            return []
        out.append((lo, hi))
    return out


def _cut(args: list[str], data: str) -> str:
    """cut -c LIST, or -d D -f LIST [--output-delimiter S]."""
    opts: dict[str, str] = {}
    k = 0
    while k < len(args):
        a = args[k]
        if a.startswith("--output-delimiter="):
            opts["o"] = a.split("=", 1)[1]
        elif a[:2] in ("-c", "-b", "-f", "-d"):
            value = a[2:] if len(a) > 2 else (args[k + 1] if k + 1 < len(args) else "")
            k += 0 if len(a) > 2 else 1
            opts[a[1]] = value
        k += 1
    lines = data.split("\n")
    if "c" in opts or "b" in opts:
        spans = _ranges(opts.get("c", opts.get("b", "")))
        return "\n".join(
            "".join(ch for i, ch in enumerate(line, 1) if any(lo <= i <= hi for lo, hi in spans))
            for line in lines
        )
    if "f" in opts:
        spans, delim = _ranges(opts["f"]), opts.get("d", "\t")[:1] or "\t"
        joiner = opts.get("o", delim)
        return "\n".join(
            joiner.join(
                x for i, x in enumerate(line.split(delim), 1) if any(lo <= i <= hi for lo, hi in spans)
            )
            for line in lines
        )
    return data


def _in_base(number: re.Match[str], base: int) -> str:
    digits = number.group()
    return str(int(digits, base)) if all(int(c, 16) < base for c in digits) else digits


def _bc(data: str, env: dict[str, str]) -> str:
    """bc's statements: arithmetic, with `ibase=N` read for the numbers after it."""
    out, base = [], 10
    for stmt in re.split(r"[;\n]", data):
        stmt = stmt.strip()
        if m := re.fullmatch(r"ibase\s*=\s*(\d+)", stmt):
            base = int(m.group(1)) if 2 <= int(m.group(1)) <= 16 else base
            continue
        if not stmt or re.match(r"[a-z]+\s*=", stmt):
            continue
        if base != 10:
            stmt = re.sub(r"\b[0-9A-F]+\b", partial(_in_base, base=base), stmt)
        value = shell_arithmetic(stmt, env)
        if value is not None:
            out.append(value + "\n")
    return "".join(out)


_ENV_REF = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


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
    if name == "let":
        for a in args:
            target, eq, expr = a.partition("=")
            if eq and target.isidentifier() and (value := shell_arithmetic(expr, view.env)) is not None:
                view.env[target] = value
        return None
    if name == "expr" and len(args) > 2:
        value = shell_arithmetic(" ".join(args), view.env)
        return value + "\n" if value is not None else None
    if name == "set" and "--" in args:
        set_positional(args[args.index("--") + 1 :], view.env)
        return None
    if name == "sed" and any(a.startswith("-i") for a in args):
        for target in (a for a in args[1:] if not a.startswith("-") and a in view.files):
            view.files[target] = _sed(args, view.files[target])
        return None
    if name == "read":
        _read(args, stdin, view)
        return None
    if name in ("readarray", "mapfile") and stdin is not None:
        names = [a for a in args if not a.startswith("-")]
        target = names[-1] if names else "MAPFILE"
        items = stdin.rstrip("\n").split("\n")[:256]
        for k, item in enumerate(items):
            view.env[f"{target}[{k}]"] = item
        view.env[f"{target}[#]"] = str(len(items))
        view.env[f"{target}[@]"] = " ".join(items)
        view.env[f"{target}[@@]"] = "".join(items)
        view.env[target] = items[0] if items else ""
        return None
    if name == "xargs" and stdin is not None:
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in ("-d", "-n", "-I", "-L", "-P", "-s", "-E") else 1
        return run((args[i:] or ["echo"]) + stdin.split(), None, view)
    if name == "dd":
        opts = dict(a.split("=", 1) for a in args if "=" in a)
        if "of" in opts and stdin is not None:
            append = "append" in opts.get("oflag", "")
            view.files[opts["of"]] = (view.files.get(opts["of"], "") if append else "") + stdin
            return None
        return view.files.get(opts.get("if", ""), stdin)
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
    if name == "xxd" and "r" in xxd_flags:
        view.notes.add("xxd -r")  # the dump format: offset, hex groups, then the text column
        return _decode("hex", "".join(m.group(1) for m in _XXD_LINE.finditer(stdin)))
    if name == "bc":
        return _bc(stdin, view.env)
    if name == "cut":
        return _cut(args, stdin)
    if name == "tac":
        lines = stdin.rstrip("\n").split("\n")
        return "\n".join(reversed(lines)) + "\n"
    if name == "sort" and not [a for a in args if not a.startswith("-")]:
        lines = sorted(
            stdin.rstrip("\n").split("\n"), reverse=any("r" in a for a in args if a.startswith("-"))
        )
        return "\n".join(lines) + "\n"
    if name == "envsubst":
        return _ENV_REF.sub(lambda m: view.env.get(m.group(1) or m.group(2), ""), stdin)
    if name == "sed":
        view.notes.add("sed")
        return _sed(args, stdin)
    if name == "perl" and (flag := next((a for a in args if re.fullmatch(r"-[lnp]*p[lnp]*e", a)), None)):
        view.notes.add("perl -pe")  # its s/…/…/ and y/…/…/ as sed -E reads them
        k = args.index(flag)
        return _sed(["-E", "-e", args[k + 1]], stdin) if k + 1 < len(args) else stdin
    if name == "paste":
        return _paste(args, stdin)
    if name in ("gunzip", "zcat") or (name == "gzip" and decoding):
        return stdin  # what base64 -d gave is already inflated
    if name == "rev":
        view.notes.add("rev")
        return "\n".join(line[::-1] for line in stdin.split("\n"))
    if name == "tr":
        view.notes.add("tr")
        return _tr(args, stdin)
    return stdin
