"""What the code points a reader to exists in this repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A path of this repository named in a docstring or comment (task-relative paths like tests/test.sh are not).
REPO_PATH = re.compile(r"(?<![\w./-])((?:rsr_core|scripts|benchmarks|data/demo|data/scripted)/[\w./-]*\w)")


def _sources() -> list[Path]:
    return sorted([*ROOT.glob("rsr_core/**/*.py"), *ROOT.glob("benchmarks/*.py"), ROOT / "app.py"])


def test_paths_named_in_the_code_exist():
    missing = [
        f"{src.relative_to(ROOT)}: {m.group(1)}"
        for src in _sources()
        for m in REPO_PATH.finditer(src.read_text())
        if not any(c in m.group(1) for c in "*{<")
        and not m.group(1).startswith("benchmarks/out")  # what the benchmarks write
        and not (ROOT / m.group(1).rstrip(".")).exists()
    ]
    assert missing == []


def test_no_reference_to_documents_outside_the_repository():
    named = [f"{src.relative_to(ROOT)}" for src in _sources() if "DESIGN.md" in src.read_text()]
    assert named == []


def test_the_modules_run_first_exist():
    """The suite's order names modules by path (tests/conftest.py): a renamed one would silently lose its place."""
    from tests.conftest import LONGEST_FIRST

    assert [path for path in LONGEST_FIRST if not (ROOT / path).is_file()] == []
