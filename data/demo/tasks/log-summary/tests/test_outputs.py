from pathlib import Path

EXPECTED = [("200", 19), ("301", 2), ("403", 1), ("404", 6), ("500", 3)]


def test_csv_exists():
    assert Path("/app/status_counts.csv").is_file()


def test_counts_per_status():
    lines = Path("/app/status_counts.csv").read_text().strip().splitlines()
    assert lines[0] == "status,count"
    rows = [tuple(line.split(",")) for line in lines[1:]]
    assert [(s, int(c)) for s, c in rows] == EXPECTED
