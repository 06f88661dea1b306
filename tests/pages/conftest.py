"""AppTest fixtures: a demo database and an empty one (real DuckDB files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rsr_core.demo import build_demo
from rsr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["overview", "trajectories", "diff", "runbooks", "rewrite", "similarity", "export"]


@pytest.fixture(scope="session")
def demo_db_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    store = Store(path)
    assert build_demo(store).errors == []
    store.close()
    return path


@pytest.fixture
def demo_db(demo_db_template, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the demo database, selected through RSR_DB."""
    path = tmp_path / "demo.duckdb"
    shutil.copy(demo_db_template, path)
    monkeypatch.setenv("RSR_DB", str(path))
    return path


@pytest.fixture
def empty_db(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "empty.duckdb"
    monkeypatch.setenv("RSR_DB", str(path))
    return path


def page(name: str, **query: str) -> AppTest:
    """Run one page of the app."""
    at = AppTest.from_file(str(ROOT / "rsr_core" / "ui" / "screens" / f"{name}.py"), default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def open_services():
    """The page's services for the current RSR_DB (the same cached object the pages use)."""
    from rsr_core.settings import Settings
    from rsr_core.ui.widgets import _services

    return _services(Settings.from_env().db_path)


def grid_frame(at: AppTest, key: str):
    """The rows the studio's table `key` (rsr_core/ui/grid.py) was given to draw, as text, by column id."""
    import json

    import pandas as pd

    for element in at.get("bidi_component"):
        if element.proto.id.endswith(f"-{key}") and element.proto.component_name == "rsr_core.grid":
            data = json.loads(element.proto.json)
            return pd.DataFrame(data["rows"], columns=data["ids"])
    raise AssertionError(f"no table {key!r} on the page")


def step_cards(at: AppTest) -> list[dict]:
    """Every step card the page's step views (rsr_core/ui/steps.py) were given to draw, in order."""
    import json

    cards = []
    for element in at.get("bidi_component"):
        if element.proto.component_name == "rsr_core.steps":
            for row in json.loads(element.proto.json)["rows"]:
                for cell in row["cells"]:
                    cards.extend(cell)
    return cards
