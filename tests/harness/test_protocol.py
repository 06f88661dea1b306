"""The Terminus 2 JSON protocol."""

import pytest

from rsr_core.formats.terminus import (
    ProtocolError,
    cut_observation,
    parse_lenient,
    parse_terminus,
    split_message,
)


def test_valid_answer_with_defaults_and_cap():
    r = parse_terminus(
        '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n"}, '
        '{"keystrokes": "sleep 100\\n", "duration": 600}], "task_complete": "true"}'
    )
    assert [c.duration for c in r.commands] == [1.0, 60.0]
    assert r.task_complete is True
    assert any("capped" in w for w in r.warnings)


def test_fenced_answer_is_read_with_a_warning_for_prose():
    r = parse_terminus('Here:\n```json\n{"analysis": "a", "plan": "p", "commands": []}\n```\nthanks')
    assert r.commands == [] and r.task_complete is False
    assert len(r.warnings) == 2


@pytest.mark.parametrize(
    "text, message",
    [
        ("no json", "No JSON object"),
        ('{"analysis": "a", "plan": "p", "commands": [', "Invalid JSON"),
        ('{"plan": "p", "commands": []}', "'analysis'"),
        ('{"analysis": "a", "plan": "p"}', "'commands'"),
        ('{"analysis": "a", "plan": "p", "commands": [{"duration": 1}]}', r"commands\[0\]"),
        ('{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "x", "duration": -1}]}', "non-negative"),
        ('{"analysis": "a", "plan": "p", "commands": [], "task_complete": "maybe"}', "task_complete"),
    ],
)
def test_protocol_errors_name_the_problem(text, message):
    with pytest.raises(ProtocolError, match=message):
        parse_terminus(text)


def test_transition_only_where_allowed():
    text = '{"analysis": "a", "plan": "p", "commands": [], "transition": "plan"}'
    assert parse_terminus(text).transition is None
    assert parse_terminus(text, allow_transition=True).transition == "plan"


def test_lenient_reads_terminus_1_fields():
    r = parse_lenient(
        '{"state_analysis": "s", "explanation": "e", "commands": [{"keystrokes": "ls\\n", '
        '"timeout_sec": 3}], "is_task_complete": true}'
    )
    assert (r.analysis, r.plan, r.commands[0].duration, r.task_complete) == ("s", "e", 3.0, True)


def test_observation_cut_keeps_head_and_tail():
    text = "A" * 6000 + "B" * 6000
    cut = cut_observation(text)
    assert cut.startswith("A" * 5000) and cut.endswith("B" * 5000) and "2000 interior bytes omitted" in cut
    assert cut_observation("short") == "short"


def test_message_round_trip():
    assert split_message("Analysis: x\nPlan: y") == ("x", "y")
