import subprocess

TWICE = {"a", "cat", "dog", "on", "sat"}


def lines():
    out = subprocess.run(["bash", "/app/top_words.sh"], capture_output=True, text=True, timeout=20).stdout
    return [line.split() for line in out.strip().splitlines()]


def test_three_lines_most_frequent_first():
    got = lines()
    assert len(got) == 3
    assert got[0] == ["5", "the"]


def test_runners_up_are_words_seen_twice():
    got = lines()
    assert all(count == "2" and word in TWICE for count, word in got[1:])
