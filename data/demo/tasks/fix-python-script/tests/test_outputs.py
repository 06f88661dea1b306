import subprocess
from pathlib import Path


def run(path):
    return subprocess.run(["python3", "/app/stats.py", path], capture_output=True, text=True, timeout=20)


def test_given_file():
    res = run("/app/numbers.txt")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "mean=5.20"


def test_other_file(tmp_path: Path):
    other = tmp_path / "other.txt"
    other.write_text("1\n2\n\n3.5\n")
    res = run(str(other))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "mean=2.17"
