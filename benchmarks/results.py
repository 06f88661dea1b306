"""RESULTS.md is shared: each benchmark script rewrites only its own "## " sections and keeps the rest."""

from __future__ import annotations

import re
from pathlib import Path

HEADER = "# Benchmarks\n\nFigures measured by the scripts in benchmarks/; each section names the command that produced it.\n"
_SECTION = re.compile(r"^## (.+?)\s*$", re.M)


def split_sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The preamble and the (title, full text) of every "## " section, in order."""
    marks = list(_SECTION.finditer(text))
    preamble = text[: marks[0].start()] if marks else text
    sections = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        sections.append((mark.group(1), text[mark.start() : end]))
    return preamble, sections


def replace_sections(path: Path, new: dict[str, str]) -> None:
    """Replace (or append) the sections titled as `new`'s keys; every other section is kept verbatim."""
    text = path.read_text() if path.exists() else HEADER
    preamble, sections = split_sections(text)
    out, done = [preamble.rstrip("\n") + "\n\n"], set()
    for title, body in sections:
        if title in new:
            out.append(new[title].rstrip("\n") + "\n\n")
            done.add(title)
        else:
            out.append(body.rstrip("\n") + "\n\n")
    for title, body in new.items():
        if title not in done:
            out.append(body.rstrip("\n") + "\n\n")
    path.write_text("".join(out).rstrip("\n") + "\n")
