"""The commands a shell script calls by name: what the verifier's scripts (`tests/test.sh`, `run-tests.sh`)
rely on, so that a run which replaced one of them is caught.

A reader, not a shell parser: it splits the text at the places a command can start (line breaks, `;`, `&`,
`|`, `(`, `{`, backquotes, `$(`, and after `if`/`then`/`do`/…), drops assignments and wrappers (`sudo`, `env`,
`timeout 60`, `xargs`, …) and keeps the first word. Reading too much is harmless (a word that is no command
resolves to nothing on PATH); reading too little would miss a runner, so wrappers are looked through.
"""

from __future__ import annotations

import posixpath
import re
import shlex

_SPLIT = re.compile(r"\$\(|`|\|\||&&|[\n;&|(){}]")
_COMMENT = re.compile(r"(^|\s)#.*$", re.M)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
_KEYWORDS = {
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case", "esac",
    "select", "function", "!", "time", "[[", "]]", "coproc",
}  # fmt: skip
# Wrappers run the next word as the command; the value says how many of their own arguments to skip
# (besides options starting with "-").
_WRAPPERS = {
    "sudo": 0, "env": 0, "exec": 0, "command": 0, "builtin": 0, "nohup": 0, "nice": 0, "xargs": 0,
    "timeout": 1, "stdbuf": 0, "setsid": 0, "chroot": 1, "su": 0, "runuser": 0, "uvx": 0, "uv": 0,
}  # fmt: skip
_UV_SUBCOMMANDS = {"run", "tool", "pip"}


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, posix=True)
    except ValueError:  # an unbalanced quote in this piece: plain whitespace split is close enough
        return segment.split()


def command_words(script: str) -> tuple[set[str], set[str]]:
    """(names, absolute paths) of the commands the script runs."""
    names: set[str] = set()
    paths: set[str] = set()
    for segment in _SPLIT.split(_COMMENT.sub(r"\1", script)):
        words = _words(segment)
        i = 0
        while i < len(words):
            word = words[i]
            if word in _KEYWORDS or _ASSIGNMENT.match(word):
                i += 1
                continue
            if word.startswith("/") and "$" not in word:
                paths.add(word)
            elif _NAME.match(word):
                names.add(word)
            else:
                break
            base = word.rsplit("/", 1)[-1]
            if base not in _WRAPPERS:
                break
            # look through the wrapper: skip its options and fixed arguments, then read the next command
            i += 1
            skip = _WRAPPERS[base]
            while i < len(words) and (words[i].startswith("-") or _ASSIGNMENT.match(words[i]) or skip):
                if not words[i].startswith("-") and not _ASSIGNMENT.match(words[i]):
                    skip -= 1
                elif words[i] in ("-p", "-w", "--with", "--python", "--from", "-u", "-s", "-k"):
                    i += 1  # an option with a value (uvx -p 3.13, uvx -w pytest==8, su -s, timeout -k 5)
                i += 1
            if base in ("uv", "uvx") and i < len(words) and words[i] in _UV_SUBCOMMANDS:
                i += 1
    return names, paths


_SOURCE = re.compile(r"(?:^|[\n;&|({]|\bthen|\bdo|\belse)\s*(?:source|\.)\s+([^\s;&|)]+)")
_PATH_SET = re.compile(r"\bPATH=([^\s;&|)]+)")


def _expand_home(word: str, home: str) -> str | None:
    """The word with `$HOME`, `${HOME}` and a leading `~` expanded; None when another expansion remains."""
    word = word.strip("\"'")
    word = re.sub(r"^~(?=/|$)", home, word).replace("${HOME}", home).replace("$HOME", home)
    return None if "$" in word or "`" in word or not word.startswith("/") else word


_CD = re.compile(r"(?:^|[\n;&|({]|\bthen|\bdo|\belse)\s*cd\s+([^\s;&|)]+)")


def directories_entered(script: str, home: str) -> list[str]:
    """The absolute directories the script `cd`s into (`$HOME` and `~` expanded)."""
    found = (_expand_home(m, home) for m in _CD.findall(_COMMENT.sub(r"\1", script)))
    return [p.rstrip("/") or "/" for p in found if p]


def sourced_files(script: str, home: str, cwds: list[str] | None = None) -> set[str]:
    """Paths the script reads with `source` / `.` (`$HOME` and `~` expanded; a relative path taken in each of
    `cwds`, the directories it may run in): code it runs."""
    out: set[str] = set()
    for word in _SOURCE.findall(_COMMENT.sub(r"\1", script)):
        path = _expand_home(word, home)
        if path:
            out.add(path)
        elif "$" not in word and "`" not in word:
            out |= {posixpath.normpath(posixpath.join(d, word.strip("\"'"))) for d in cwds or []}
    return out


def path_additions(script: str, home: str) -> list[str]:
    """Directories the script puts on PATH (`PATH=…`, `export PATH=…`; `$HOME` and `~` expanded)."""
    dirs: list[str] = []
    for value in _PATH_SET.findall(_COMMENT.sub(r"\1", script)):
        for part in value.strip("\"'").split(":"):
            d = _expand_home(part, home)
            if d and d not in dirs:
                dirs.append(d.rstrip("/") or "/")
    return dirs


_LOGIN = re.compile(
    r"\b(?:ba|z|da|k)?sh\s+(?:-[A-Za-z]*[li][A-Za-z]*\b|--login\b)|\b(?:su|login|runuser)\b|\bsudo\s+-[A-Za-z]*i"
    r"|/etc/profile|/etc/bash\.bashrc|\bBASH_ENV\b|\bENV="
)


def reads_shell_profiles(script: str) -> bool:
    """The script starts a shell that reads the system's startup files (a login or interactive shell, `su`,
    `sudo -i`, `BASH_ENV`/`ENV`) or reads them itself."""
    return bool(_LOGIN.search(_COMMENT.sub(r"\1", script)))
