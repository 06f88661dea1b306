"""Versioned prompt templates. A template's version is its file name's `_vN` suffix."""

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


def render(template: str, **values: Any) -> str:
    """Fill `{name}` placeholders; other braces (JSON examples) are left alone."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def version_of(name: str) -> str:
    """'planner_v2.md' -> 'planner_v2'."""
    return name.rsplit(".", 1)[0]
