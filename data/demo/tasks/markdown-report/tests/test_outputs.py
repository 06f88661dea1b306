from pathlib import Path


def report():
    return Path("/app/report.md").read_text()


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_heading():
    assert report().splitlines()[0].strip() == "# Inventory Report"


def test_table_rows():
    rows = [cells(line) for line in report().splitlines() if line.strip().startswith("|")]
    assert rows[0] == ["Name", "Qty", "Price"]
    body = [r for r in rows[1:] if not set("".join(r)) <= set("-: ")]
    assert body == [["bolt", "120", "0.15"], ["nut", "300", "0.05"], ["washer", "75", "0.02"],
                    ["bracket", "12", "3.40"]]


def test_total():
    assert "Total value: 75.30" in report()
