from rsr_core.analysis.commands import commands_of, keystrokes_of_call, normalise_segment, split_commands


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
    assert commands_of(["a\nb\n", "C-c", "c"]) == ["a", "b", "c"]
