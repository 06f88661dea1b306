"""Versioned prompt templates (Jinja2: `{{ name }}` placeholders; a missing value is an error, never an empty
string). A template's version is its file name's `_vN` suffix."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load(name: str) -> str:
    """The text of a template file in this package (e.g. 'terminus2_v1.md')."""
    return resources.files(__package__).joinpath(name).read_text()


def load_json(name: str) -> Any:
    """A JSON template file (message sets)."""
    return json.loads(load(name))


@cache
def _environment() -> Any:
    import jinja2

    # Prompts are plain text (no HTML escaping), kept byte for byte (the trailing newline too).
    return jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


@cache
def _compiled(template: str) -> Any:
    return _environment().from_string(template)


def render(template: str, **values: Any) -> str:
    """Fill a template's `{{ name }}` placeholders; a placeholder without a value raises jinja2's
    UndefinedError (single braces, as in JSON examples, are plain text)."""
    return _compiled(template).render(**values)


def version_of(name: str) -> str:
    """'planner_v2.md' -> 'planner_v2'."""
    return name.rsplit(".", 1)[0]
