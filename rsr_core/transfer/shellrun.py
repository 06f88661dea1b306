"""The state of a shell session as shellnorm reads it, and running one pipeline on it: assignments, programs
(Python, shell, other languages), the commands filters.py knows, and redirections into files."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rsr_core.transfer import filters
from rsr_core.transfer.programs import code_literals, program_of
from rsr_core.transfer.pyfold import python_data

_SEP_WORDS = {"{", "}", "then", "do", "else", "fi", "done", "if", "while", "until", "!", "elif", "esac"}
_NAME = re.compile(r"^[A-Za-z_][\w.+-]*$")  # a command name (a path to a program is a value: kept)
_DIGITS = re.compile(r"\d{3}")
MAX_JOINED_PIECES = 8  # a program's inputs joined two by two (at most 56 readings)
MAX_JOINED_INPUT = 400
MAX_CALLS = 1000  # function calls read in one session (a call fan-out cannot multiply the work)
_INSTALLERS = {"pip", "pip3", "apt-get", "apt", "npm", "yarn", "gem", "cargo", "go", "conda", "pipx", "brew"}


@dataclass
class ShellView:
    """What a piece of typed shell text spells out."""

    text: list[str] = field(default_factory=list)
    """Words after quoting, escapes and expansions; Python programs replaced by their data."""
    python: list[str] = field(default_factory=list)
    """Data the Python programs in it spell out."""
    output: list[str] = field(default_factory=list)
    """What its echo / printf / here-docs print, after re-encoding filters."""
    files: dict[str, str] = field(default_factory=dict)
    """Contents written to files with `>` / `>>` / tee, by path."""
    env: dict[str, str] = field(default_factory=dict)
    """Shell variables assigned so far."""
    notes: set[str] = field(default_factory=set)
    """The re-encoding filters the output went through ('base64 -d', 'rev', …), for evidence."""

    def copy(self) -> ShellView:
        """An independent copy (a session's state kept at a clean line end)."""
        return ShellView(
            list(self.text),
            list(self.python),
            list(self.output),
            dict(self.files),
            dict(self.env),
            set(self.notes),
        )


@dataclass
class Command:
    """One simple command as read: its words, redirections and here-doc / here-string input."""

    words: list[str] = field(default_factory=list)
    redirs: list[tuple[str, str]] = field(default_factory=list)
    stdin: str | None = None
    stdin_quoted: bool = False


def _assign(word: str, env: dict[str, str]) -> bool:
    name, eq, value = word.partition("=")
    name, append = (name[:-1], True) if name.endswith("+") else (name, False)
    if not eq or not name or not (name[0].isalpha() or name[0] == "_"):
        return False
    if not all(c.isalnum() or c == "_" for c in name):
        return False
    env[name] = env.get(name, "") + value if append else value
    return True


def _how_words(words: list[str], alone: bool) -> list[str]:
    """The words of a command that say how, not what: its name, and the packages an install names. A word with
    three digits in a row is kept all the same (a value dressed as a name)."""
    if not words:
        return []
    # A lone word is not taken for a command: it may be a line typed into `cat > file` or an editor.
    how = [words[0]] if _NAME.match(words[0]) and not alone else []
    for k in range(1, len(words)):
        if words[k] == "install" and words[k - 1].rsplit("/", 1)[-1] in _INSTALLERS:
            how += words[k + 1 :]
            break
    return [w for w in how if not _DIGITS.search(w)]


def _program(kind: str, code: str, view: ShellView, reread: Callable[[str], None]) -> bool:
    """Read a program into the view; False when it is not what it claims to be (kept as text then)."""
    if kind == "python":
        found = python_data(code)
        if found is None:
            return False
        view.python += found
    elif kind == "shell":
        reread(code)
    else:
        view.text += code_literals(code)
    return True


def _json_strings(text: str) -> list[str]:
    """The string values of a JSON document (what jq joins), or [] when it is not JSON."""
    try:
        doc = json.loads(text)
    except ValueError:
        return []
    out: list[str] = []
    todo = [doc]
    while todo and len(out) < MAX_JOINED_PIECES:
        item = todo.pop(0)
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            todo += list(item.values())
        elif isinstance(item, list):
            todo += item
    return out


def _joined_inputs(words: list[str], code: str, stdin: str | None) -> list[str]:
    """A program's data from outside its code (arguments, `-v name=value`, a few words of input), joined two by two
    in either order: what `sys.argv[1] + sys.argv[2]`, `print a b` or `$2 $1` may spell."""
    pieces = [
        w.partition("=")[2] if "=" in w else w for w in words[1:] if w != code and not w.startswith("-")
    ]
    if stdin is not None and stdin != code and len(stdin) <= MAX_JOINED_INPUT:
        pieces += _json_strings(stdin) or stdin.split()
    pieces = [p for p in dict.fromkeys(pieces) if p][:MAX_JOINED_PIECES]
    return [a + b for a in pieces for b in pieces if a is not b]


def run_pipeline(pipeline: list[Command], view: ShellView, reread: Callable[[str], None]) -> None:
    """Run one pipeline on the session's state: assignments, programs, known commands, redirections."""
    data: str | None = None
    for cmd in pipeline:
        words = [w for w in cmd.words if w not in _SEP_WORDS]
        while words and _assign(words[0], view.env):
            view.text.append(words.pop(0).partition("=")[2])
        if words and f"alias {words[0]}" in view.env:  # the terminal is interactive: aliases expand
            words = view.env[f"alias {words[0]}"].split() + words[1:]
        if words and words[0] == "alias":
            for w in words[1:]:
                name, eq, value = w.partition("=")
                if eq and name:
                    view.env[f"alias {name}"] = value
        if words and words[0] in ("export", "declare", "local", "readonly", "typeset"):
            # an unquoted substitution splits into several assignments (`export $(cat .env)`)
            assignments = [a for w in words[1:] for a in (w.split() if "\n" in w else [w])]
            view.text += [
                w.partition("=")[2] for w in assignments if not w.startswith("-") and _assign(w, view.env)
            ]
            words = []
        if words and words[0].rsplit("/", 1)[-1] in (".", "source", "bash", "sh", "dash"):
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            calls = int(view.env.get("#calls", "0")) + 1
            if script is not None and script in view.files and calls <= MAX_CALLS:  # a file written earlier
                view.env["#calls"] = str(calls)
                reread(view.files[script])
        stdin = cmd.stdin if cmd.stdin is not None else data
        targets = [t for op, t in cmd.redirs if op in (">", ">>", ">|", "&>")]
        for op, target in cmd.redirs:
            if op == "<":
                stdin = view.files.get(target, stdin)
        alone = len(words) == 1 and len(pipeline) == 1 and not cmd.redirs and cmd.stdin is None
        how = _how_words(words, alone)
        view.text += [w for w in words if w not in how] + [t for _, t in cmd.redirs]
        if words and f"{words[0]}()" in view.env:  # a call of a function defined earlier, with its arguments
            calls = int(view.env.get("#calls", "0")) + 1
            view.env["#calls"] = str(calls)
            if calls <= MAX_CALLS:
                filters.set_positional(words[1:], view.env)
                reread(view.env[f"{words[0]}()"])
            data = None
            continue
        program = program_of(words, cmd.stdin, targets)
        if program is not None and program[0] == "shell" and "-c" in words[:-1]:
            filters.set_positional(words[words.index("-c") + 2 :], view.env, first=0)
        if program is not None and _program(*program, view, reread):
            if program[1] in view.text:
                view.text.remove(program[1])  # its data replaces it
            if program[0] != "shell":
                view.python += _joined_inputs(words, program[1], stdin)
            data = None  # what a program prints is not known, and a source file written is code, not data
            continue
        if cmd.stdin is not None:
            view.text.append(cmd.stdin)
        data = filters.run(words, stdin, view)
        for op, target in cmd.redirs:
            if op in (">", ">|", "&>") and data is not None:
                view.files[target] = data
            elif op == ">>" and data is not None:
                view.files[target] = view.files.get(target, "") + data
        if targets:
            data = None
    if data:
        view.output.append(data)
