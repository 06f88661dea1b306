from rsr_core.formats.commands import keystrokes_of_call, normalise_segment, split_commands


def test_segments_are_normalised_per_definition():
    assert split_commands("ls -la\ncat  data.csv   \n\n") == ["ls -la", "cat data.csv"]
    assert split_commands("python3 \t x.py\t\n") == ["python3 x.py"]
    assert split_commands("echo a\r\necho b") == ["echo a", "echo b"]


def test_tmux_key_names_and_blank_lines_are_dropped():
    assert split_commands("C-c\nq\nEnter\n  \nTab\nls\n") == ["ls"]
    assert normalise_segment("  C-d ") is None
    # a key name inside a longer line is a command
    assert split_commands("q /tmp\n") == ["q /tmp"]


def test_leading_whitespace_is_not_an_inner_run():
    assert normalise_segment("  ls    -l  ") == "  ls -l"


def test_non_terminus_tool_arguments():
    assert keystrokes_of_call({"command": "echo hi"}) == "echo hi"
    assert keystrokes_of_call({"cmd": "pwd"}) == "pwd"
    assert keystrokes_of_call({"keystrokes": "ls\n", "command": "x"}) == "ls\n"
    assert keystrokes_of_call({"path": "/x"}) is None
    assert [c for keys in ["a\nb\n", "C-c", "c"] for c in split_commands(keys)] == ["a", "b", "c"]


def _reference(segment: str) -> str | None:
    """The definition written as regexes (trailing whitespace off, inner runs of \\s to one space)."""
    import re

    text = segment.rstrip()
    if not text or text.strip() in {"C-c", "C-d", "C-z", "Escape", "Enter", "Tab", "Up", "Down", "Left",
                                    "Right", "BSpace", "q"}:  # fmt: skip
        return None
    lead = re.match(r"^\s*", text).group(0)
    return lead + re.sub(r"(?<=\S)\s+(?=\S)", " ", text[len(lead) :])


def test_normalisation_matches_the_regex_definition_on_any_whitespace():
    import random
    import sys

    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace() and chr(c) != "\n"]
    alphabet = spaces * 2 + list("ab q-C") + ["Tab", "C-c", "é", "\u200b"]
    rng = random.Random(3)
    for _ in range(20_000):
        segment = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert normalise_segment(segment) == _reference(segment), repr(segment)
