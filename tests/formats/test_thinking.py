"""Thinking apart from the answer, and the JSON object of an answer found by parsing, not by the first and
last brace."""

from __future__ import annotations

import json

import pytest

from rsr_core.formats.terminus import ProtocolError, extract_json_object, parse_lenient, parse_terminus
from rsr_core.formats.thinking import split_thinking

ANSWER = json.dumps(
    {"analysis": "a {x}", "plan": "p", "commands": [{"keystrokes": "ls\n"}], "task_complete": False}
)


@pytest.mark.parametrize(
    ("text", "thinking"),
    [
        (f"<think>try {{x}} then {{y: 1}}</think>\n\n{ANSWER}", "try {x} then {y: 1}"),
        (f"  <thinking>\nweigh it\n</thinking>{ANSWER}", "weigh it"),
        (f"<reasoning>r</reasoning><think>t</think>\n{ANSWER}", "r\n\nt"),
        (f"<seed:think>s</seed:think>{ANSWER}", "s"),
        (f"opened by the template {{a}}</think>\n{ANSWER}", "opened by the template {a}"),
    ],
)
def test_thinking_in_any_common_form_is_taken_out_before_the_answer_is_read(text, thinking):
    got, answer = split_thinking(text)
    assert got == thinking and answer == ANSWER
    assert parse_terminus(answer).commands[0].keystrokes == "ls\n"


def test_thinking_left_open_is_all_thinking_and_no_thinking_is_no_change():
    assert split_thinking("<think>still going {") == ("still going {", "")
    assert split_thinking(ANSWER) == (None, ANSWER)
    said = 'Plan: explain "<think>" tags'  # a tag inside the answer is the answer's
    assert split_thinking(said) == (None, said)


def test_the_object_that_parses_is_read_not_the_span_between_the_outer_braces():
    prose = "I will use {braces} in prose. " + ANSWER + " Then {more}."
    obj, warnings = extract_json_object(prose, ("analysis", "commands"))
    assert obj["plan"] == "p" and len(warnings) == 2
    fenced = 'Example: {"analysis": 1}\n```json\n' + ANSWER + "\n```\n"
    assert extract_json_object(fenced)[0]["plan"] == "p"
    two = '{"note": "x"} ' + ANSWER  # the one with the protocol's fields wins
    assert parse_terminus(two).plan == "p"
    strings = json.dumps({"analysis": "}{ not a brace", "plan": "{", "commands": [], "task_complete": True})
    assert parse_terminus("text } " + strings).analysis == "}{ not a brace"


def test_an_answer_with_no_object_or_a_cut_one_says_so():
    with pytest.raises(ProtocolError, match="No JSON object"):
        extract_json_object("no braces here")
    with pytest.raises(ProtocolError, match="never closed"):
        extract_json_object(ANSWER[:-3])
    with pytest.raises(ProtocolError, match="Invalid JSON"):
        extract_json_object('{"a": tru} and nothing else')


def test_terminus_one_answers_are_read_past_thinking_braces():
    old = json.dumps({"state_analysis": "s", "explanation": "e", "commands": [], "is_task_complete": True})
    parsed = parse_lenient('{"scratch": 1} ' + old)
    assert parsed is not None and parsed.analysis == "s" and parsed.task_complete
