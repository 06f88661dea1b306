"""Prompt templates: Jinja2 with StrictUndefined, rendered byte for byte, values never re-read as templates."""

from __future__ import annotations

import re
from importlib import resources

import jinja2
import pytest

from rsr_core import prompts

TEMPLATES = sorted(p.name for p in resources.files("rsr_core.prompts").iterdir() if p.name.endswith(".md"))


def test_a_missing_value_is_an_error_not_an_empty_string():
    with pytest.raises(jinja2.UndefinedError, match="runbook"):
        prompts.render(prompts.load("critic_user_v1.md"), instruction="do it")


def test_values_are_inserted_as_text_and_the_rest_is_kept_exactly():
    text = prompts.render(prompts.load("executor_guidance_v1.md"), runbook="use {{ secret }} and {% raw %}")
    assert "use {{ secret }} and {% raw %}" in text
    assert text.endswith("\n") == prompts.load("executor_guidance_v1.md").endswith("\n")
    json_example = prompts.render(prompts.load("terminus2_v1.md"), instruction="i", terminal="t")
    assert '{"keystrokes": "ls -la\\n", "duration": 0.1}' in json_example  # single braces are plain text


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_renders_with_its_own_placeholders(name):
    template = prompts.load(name)
    names = set(re.findall(r"\{\{ ([a-z_]+) \}\}", template))
    rendered = prompts.render(template, **{n: f"<{n}>" for n in names})
    assert all(f"<{n}>" in rendered for n in names) and "{{" not in rendered
