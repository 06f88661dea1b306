"""Shared fixtures: real DuckDB stores and the committed real-format fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.store import Store

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    """tests/data: small fixtures in each real format (see tests/data/make_fixtures.py)."""
    return DATA


@pytest.fixture
def store() -> Store:
    """A fresh in-memory DuckDB store."""
    s = Store(":memory:")
    yield s
    s.close()


@pytest.fixture
def file_store(tmp_path: Path) -> Store:
    """A fresh DuckDB file store."""
    s = Store(tmp_path / "rsr.duckdb")
    yield s
    s.close()
