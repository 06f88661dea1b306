"""The `trainer` side venv: the libraries trainers load our exports with (`datasets`, transformers with a
tokenizer built from `tokenizers`), pinned in trainer-constraints.txt; no torch, nothing downloaded at run time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.side_venv import named_venv, run_side

HERE = Path(__file__).parent
TRAINER_CHECK = HERE / "trainer_check.py"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "formats: checks our files with the other tools' own models in a side venv (needs PyPI once)",
    )


@pytest.fixture(scope="session")
def trainer_python() -> Path:
    """Python of the trainer side venv, built when missing (the tests fail, never skip, when it cannot be)."""
    return named_venv("trainer")


@pytest.fixture
def trainer_check(trainer_python, tmp_path, monkeypatch):
    """Run trainer_check.py in the side venv, offline, with its caches under tmp_path; returns its JSON."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))

    def check(*args: str) -> dict:
        return json.loads(run_side(trainer_python, [str(TRAINER_CHECK), *args]).stdout)

    return check
