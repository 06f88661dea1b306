from pathlib import Path


def test_alpha():
    assert Path("/app/alpha.txt").read_text().strip() == "alpha"


def test_beta():
    assert Path("/app/beta.txt").read_text().strip() == "beta"
