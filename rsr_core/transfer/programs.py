"""Programs inside shell commands: which words or here-docs are code, and the data a program in a language other
than Python spells out (its string literals and numbers; identifiers, keywords and comments are code)."""

from __future__ import annotations

import re
from typing import Literal

from rsr_core.transfer.decode import unescape
from rsr_core.transfer.pyfold import arithmetic

Kind = Literal["python", "shell", "code"]
_PYTHON = re.compile(r"^(?:.*/)?python[0-9.]*$")
_SHELLS = {"bash", "sh", "dash", "zsh"}
_INLINE = {
    "perl": "-e",
    "ruby": "-e",
    "node": "-e",
    "php": "-r",
    "awk": "",
    "gawk": "",
    "mawk": "",
    "jq": "",
    "dc": "-e",
}
# options followed by values (how many) before the program of awk or jq
_VALUE_FLAGS = {
    "-F": 1, "-v": 1, "-f": 1, "--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2,
    "--from-file": 1, "-L": 1, "--indent": 1,
}  # fmt: skip
CODE_EXTENSIONS = frozenset(
    [
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".go",
        ".java",
        ".js",
        ".mjs",
        ".ts",
        ".kt",
        ".rs",
        ".rb",
        ".pl",
        ".php",
        ".lua",
        ".swift",
        ".scala",
        ".awk",
        ".r",
        ".jl",
        ".sql",
    ]
)
_NUMBER = re.compile(r"\d[\d_.]*(?:[eE][-+]?\d+)?|0[xX][0-9A-Fa-f]+")


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _inline_program(name: str, args: list[str]) -> str | None:
    flag = _INLINE[name]
    if flag:
        return args[args.index(flag) + 1] if flag in args[:-1] else None
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 1 + _VALUE_FLAGS.get(args[i], 0)
    return args[i] if i < len(args) else None


def program_of(words: list[str], stdin: str | None, targets: list[str]) -> tuple[Kind, str] | None:
    """The program a command runs or writes, and its language: `python3 -c CODE`, `bash -c CODE`, `eval`,
    `awk 'PROG'`, `perl -e CODE`, a here-doc fed to an interpreter, or a here-doc / tee written to a source file."""
    name = words[0].rsplit("/", 1)[-1] if words else ""
    args = words[1:]
    if _PYTHON.match(name):
        return ("python", args[args.index("-c") + 1]) if "-c" in args[:-1] else ("python", stdin or "")
    if name in _SHELLS:
        return ("shell", args[args.index("-c") + 1]) if "-c" in args[:-1] else ("shell", stdin or "")
    if name == "eval":
        return "shell", " ".join(args)
    if name in _INLINE:
        program = _inline_program(name, args)
        return ("code", program) if program is not None else None
    written = targets + ([w for w in args if not w.startswith("-")] if name == "tee" else [])
    if stdin is None or not written:
        return None
    extensions = {_extension(t) for t in written}
    if ".py" in extensions:
        return "python", stdin
    if extensions & {".sh", ".bash"}:
        return "shell", stdin
    if extensions & CODE_EXTENSIONS:
        return "code", stdin
    return None


_ARITH = re.compile(r"(?<![\w.])\(?\s*\d+(?:\s*\)?\s*[-+*/%]\s*\(?\s*\d+)+\s*\)?(?![\w.])")
_CHAR_CODES = 3  # a run of at least this many printable character codes is read as the text they spell
# Two numbers and an operator after them: what dc (reverse Polish notation) computes.
_RPN = re.compile(r"(?<![\w.])(\d+)\s+(\d+)\s*([-+*])(?![\w=])")
# A string literal sliced (jq, Python, Ruby): `"…"[2:9]`.
_SLICE = re.compile(r"\s*\[\s*(-?\d*)\s*:\s*(-?\d*)\s*\]")


def code_literals(code: str) -> list[str]:
    """String literals (escapes decoded) and numbers of C-like or script code, comments and names dropped; and
    what they compute: arithmetic of number literals (`8800+41`, dc's `8800 41 +`), slices of string literals
    (`"…"[2:9]`), runs of character codes (`chr(90).chr(82)…`, `String.fromCharCode(90, 82, …)`,
    `printf "%c%c%c", 90, 82, 45`) as the text they spell."""
    out = _literals(code)
    for m in _ARITH.finditer(code):
        if (value := arithmetic(m.group().strip())) is not None:
            out.append(value)
    for a, b, op in _RPN.findall(code):
        if (value := arithmetic(f"{a}{op}{b}")) is not None:
            out.append(value)
    run: list[str] = []
    for item in [*out, ""]:
        if item.isdigit() and 32 <= int(item) < 127:
            run.append(chr(int(item)))
            continue
        if len(run) >= _CHAR_CODES:
            out.append("".join(run))
        run = []
    return out


def _literals(code: str) -> list[str]:
    out: list[str] = []
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if code.startswith("//", i) or (ch == "#" and (i == 0 or code[i - 1] in " \t\n;{")):
            end = code.find("\n", i)
            i = n if end < 0 else end
        elif code.startswith("/*", i):
            end = code.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch in "\"'`":
            j = i + 1
            while j < n and code[j] != ch and (ch == "`" or code[j] != "\n"):
                j += 2 if code[j] == "\\" else 1
            if j < n and code[j] == ch:
                text = unescape(code[i + 1 : j], c_octal=True)
                out.append(text)
                i = j + 1
                if sliced := _SLICE.match(code, i):
                    lo, hi = (int(x) if x else None for x in sliced.groups())
                    out.append(text[lo:hi])
            else:
                i += 1  # a lone quote (Rust lifetime, apostrophe in a comment): not a string
        elif ch.isdigit() and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            m = _NUMBER.match(code, i)
            token = m.group() if m else ch
            out.append(token)
            i += len(token)
        elif ch.isalpha() or ch == "_":
            while i < n and (code[i].isalnum() or code[i] == "_"):
                i += 1
        else:
            i += 1
    return out
