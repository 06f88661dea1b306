from pathlib import Path


def test_greeting_file_exists():
    assert Path("/app/greeting.txt").is_file()


def test_greeting_text():
    assert Path("/app/greeting.txt").read_text() == "Hello, world!\n"
