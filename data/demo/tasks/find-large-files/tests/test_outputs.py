from pathlib import Path


def test_large_files():
    lines = Path("/app/large_files.txt").read_text().split()
    assert lines == ["img/raw/photo.raw", "just_over.bin", "logs/big.log"]
