"""Literals: what hidden tests and solutions contain (for the Critic and the answer-transfer filter), what the
source run wrote into files, and the multi-word values among them (for the answer-transfer filter)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from rsr_core.models import Task, Trajectory

_QUOTED = re.compile(r"'([^'\n]*)'|\"((?:[^\"\\\n]|\\.)*)\"")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\b", re.S)
_WRITE = re.compile(r"\b(?:echo|printf)\s+(?:-[a-z]+\s+)*(['\"])(.*?)\1\s*>>?", re.S)
_CODE_CHARS = set("${}()|;<>`")


def _quoted(match: re.Match) -> str:
    return match.group(1) if match.group(1) is not None else match.group(2)


@dataclass(frozen=True)
class Hidden:
    """A piece of hidden text the runbook must not reveal."""

    text: str
    path: str
    kind: str  # verifier_leak or solution_leak
    what: str  # literal, number, test name, test path, assertion, solution line, final content


def _py_hidden(path: str, source: str) -> list[Hidden]:
    out: list[Hidden] = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [Hidden(_quoted(m), path, "verifier_leak", "literal") for m in _QUOTED.finditer(source)]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and not isinstance(node.value, bool)
        ):
            out.append(Hidden(node.value, path, "verifier_leak", "literal"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int | float)
            and not isinstance(node.value, bool)
        ):
            out.append(Hidden(repr(node.value), path, "verifier_leak", "number"))
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            out.append(Hidden(node.name, path, "verifier_leak", "test name"))
        elif isinstance(node, ast.Assert):
            segment = ast.get_source_segment(source, node)
            if segment:
                out.append(
                    Hidden(segment.removeprefix("assert ").strip(), path, "verifier_leak", "assertion")
                )
    return out


def hidden_texts(task: Task) -> list[Hidden]:
    """Everything of the hidden tests and the reference solution worth looking for in a runbook."""
    out: list[Hidden] = []
    for f in task.files:
        if f.role == "test":
            name = f.path.rsplit("/", 1)[-1]
            out += [
                Hidden(f.path, f.path, "verifier_leak", "test path"),
                Hidden(name, f.path, "verifier_leak", "test path"),
            ]
            if f.path.endswith(".py"):
                out += _py_hidden(f.path, f.content)
            else:
                out += [
                    Hidden(_quoted(m), f.path, "verifier_leak", "literal")
                    for m in _QUOTED.finditer(f.content)
                ]
        elif f.role == "solution":
            for line in f.content.splitlines():
                line = line.strip()
                if line and not line.startswith("#") and not line.startswith("#!"):
                    out.append(Hidden(line, f.path, "solution_leak", "solution line"))
            out += [
                Hidden(_quoted(m), f.path, "solution_leak", "literal") for m in _QUOTED.finditer(f.content)
            ]
    return out


def final_contents(source: Trajectory) -> list[Hidden]:
    """What the source run wrote into files: heredoc bodies and echo/printf arguments redirected to a file."""
    out: list[Hidden] = []
    for step in source.steps:
        for cmd in step.commands:
            for m in _HEREDOC.finditer(cmd.keystrokes):
                out += [
                    Hidden(line.strip(), "source run", "solution_leak", "final content")
                    for line in m.group(2).splitlines()
                    if line.strip()
                ]
            out += [
                Hidden(m.group(2), "source run", "solution_leak", "final content")
                for m in _WRITE.finditer(cmd.keystrokes)
            ]
    return out


def hidden_phrases(task: Task, source: Trajectory, min_len: int) -> list[tuple[str, str]]:
    """Multi-word data values the run could not see, with where they are: string literals of the tests and the
    solution and the lines the source run wrote into files (single words are found token by token)."""
    where = {"verifier_leak": "the tests", "solution_leak": "the solution"}
    out: list[tuple[str, str]] = []
    for h in hidden_texts(task) + final_contents(source):
        text = " ".join(h.text.split())
        if h.what not in ("literal", "final content") or " " not in text or len(text) < max(min_len, 8):
            continue
        if _CODE_CHARS & set(text):
            continue
        out.append((text, "the source run" if h.path == "source run" else where[h.kind]))
    return out
