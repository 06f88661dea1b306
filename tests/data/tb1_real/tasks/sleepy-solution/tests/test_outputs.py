from pathlib import Path


def test_finished():
    assert Path("/app/finished.txt").read_text().strip() == "finished"
