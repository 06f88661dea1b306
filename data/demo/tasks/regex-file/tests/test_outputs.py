import re
from pathlib import Path

GOOD = ["2024-01-15", "1999-12-31", "2000-10-01", "2023-09-30", "1970-02-28"]
BAD = ["2024-13-01", "2024-00-10", "24-01-15", "2024-1-15", "2024-01-32", "2024-01-00", "2024-01-15x", "x2024-01-15"]


def pattern():
    return re.compile(Path("/app/date_regex.txt").read_text().strip())


def test_matches_valid_dates():
    assert all(pattern().fullmatch(s) for s in GOOD)


def test_rejects_invalid_dates():
    assert not any(pattern().fullmatch(s) for s in BAD)
