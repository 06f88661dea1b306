from pathlib import Path


def test_expensive_products():
    names = Path("/app/expensive.txt").read_text().split()
    assert names == ["backpack", "chair", "desk", "kettle", "lamp"]
