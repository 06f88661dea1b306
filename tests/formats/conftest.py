"""Tests that check what we write with the other tools' own code, in side venvs (see tests/side_venv.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.side_venv import named_venv, run_side

HERE = Path(__file__).parent
HARBOR_CHECK = HERE / "harbor_check.py"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "formats: checks our files with the other tools' own models in a side venv (needs PyPI once)",
    )


@pytest.fixture(scope="session")
def harbor_python() -> Path:
    """Python of the harbor side venv (harbor pinned in harbor-constraints.txt), built when missing."""
    return named_venv("harbor")


@pytest.fixture(scope="session")
def harbor_check(harbor_python):
    """Validate paths with harbor's models: returns {"harbor", "checked", "errors"}."""

    def check(*paths: Path) -> dict:
        done = run_side(harbor_python, [str(HARBOR_CHECK), *map(str, paths)])
        return json.loads(done.stdout)

    return check


@pytest.fixture(scope="session")
def atif_field_versions(harbor_python) -> dict[str, dict[str, int]]:
    """The ATIF version that added each field, read from harbor's own model descriptions."""
    return json.loads(run_side(harbor_python, [str(HARBOR_CHECK), "--field-versions"]).stdout)
