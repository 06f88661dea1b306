"""Reward values and reward.json shapes, and the commands read out of test scripts (no engine needed)."""

from __future__ import annotations

import pytest

from rsr_core.sandbox.reward import reward_from_json, reward_from_text
from rsr_core.sandbox.script_commands import command_words


@pytest.mark.parametrize(
    "text, reward, reason",
    [
        ("1\n", 1.0, None),
        (" 0.25 ", 0.25, None),
        ("nan", 0.0, "not a finite number"),
        ("inf", 0.0, "not a finite number"),
        ("-Infinity", 0.0, "not a finite number"),
        ("1.5", 0.0, "outside [0, 1]"),
        ("-0.1", 0.0, "outside [0, 1]"),
        ("passed", 0.0, "not a number"),
    ],
)
def test_reward_txt_values(text, reward, reason):
    got, note = reward_from_text(text)
    assert got == reward
    assert (note is None) if reason is None else (reason in note)


@pytest.mark.parametrize(
    "text, reward, reason",
    [
        ("1", 1.0, None),
        ('{"reward": 0.5, "accuracy": 0.9}', 0.5, None),
        ('{"accuracy": 1.0, "name": "x"}', 1.0, None),  # the only numeric value
        ('{"rewards": {"reward": 1}}', 1.0, None),
        ('{"accuracy": 1.0, "f1": 0.5}', None, "no 'reward' key and 2 numeric values"),
        ('{"passed": true}', None, "0 numeric values"),
        ('{"reward": "1"}', None, "not a number"),
        ('{"reward": NaN}', 0.0, "not a finite number"),
        ('{"reward": Infinity}', 0.0, "not a finite number"),
        ('{"reward": 2}', 0.0, "outside [0, 1]"),
        ("[1]", 0.0, "neither a number nor an object"),
        ("{not json", 0.0, "not valid JSON"),
    ],
)
def test_reward_json_shapes(text, reward, reason):
    got, note = reward_from_json(text)
    assert got == reward
    assert (note is None) if reason is None else (reason in note)


def test_commands_of_a_test_script_look_through_wrappers():
    names, paths = command_words(
        "#!/bin/bash\n"
        "# rm in a comment is not a command\n"
        "apt-get install -y curl > /dev/null; source $HOME/.local/bin/env\n"
        "if [ -d /app ]; then uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf x; fi\n"
        "X=1 timeout -k 5 60 /usr/bin/python3 -m pytest && echo 1 > /logs/verifier/reward.txt\n"
        "out=$(jq .a f | sort -u); cd /app && sudo -u bob make test; uv run checker\n"
    )
    assert {
        "apt-get",
        "source",
        "uvx",
        "pytest",
        "timeout",
        "echo",
        "jq",
        "sort",
        "cd",
        "sudo",
        "make",
    } <= names
    assert {"uv", "checker"} <= names
    assert paths == {"/usr/bin/python3"}
    assert "rm" not in names and "bob" not in names and "60" not in names
