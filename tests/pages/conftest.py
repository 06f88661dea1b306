"""AppTest fixtures: a demo database and an empty one (real DuckDB files)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["overview", "trajectories", "diff", "runbooks", "rewrite", "similarity", "export"]


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
    from rsr_core.ui.data import _services

    return _services(Settings.from_env().db_path)


def component_data(at: AppTest, name: str) -> Iterator[tuple[str, dict]]:
    """(element id, data) of every instance of the studio's component `name` on the page, in order."""
    for element in at.get("bidi_component"):
        if element.proto.component_name == name:
            yield element.proto.id, json.loads(element.proto.json)


def component_data_of(at: AppTest, key: str) -> dict:
    """The data the studio's component keyed `key` was given to draw."""
    for element in at.get("bidi_component"):
        if element.proto.id.endswith(f"-{key}"):
            return json.loads(element.proto.json)
    raise AssertionError(f"no component {key!r} on the page")


def send_state(at: AppTest, key: str, name: str, value: object) -> AppTest:
    """Run the page as the browser does after the studio's component `key` set its state `name` to `value`
    (AppTest cannot type or click inside a component): the page's widget states and the component's state, as
    the front end sends it (Streamlit's own wiring then calls the component's callback for that state)."""
    (element_id,) = [e.proto.id for e in at.get("bidi_component") if e.proto.id.endswith(f"-{key}")]
    states = at._tree.get_widget_states()  # noqa: SLF001 - what .run() sends, plus the state below
    state = states.widgets.add()
    state.id = element_id
    state.json_value = json.dumps({name: value})
    return at._run(states)  # noqa: SLF001


_CLICKS = iter(range(1, 1_000_000))


def submit_review(at: AppTest, form: str, decision: str, reviewer: str = "", reason: str = "") -> AppTest:
    """Approve or reject in the Runbooks page's review form `form` ("focus": the round shown; "bulk") with
    this reviewer and reason typed (each call a new click, as the form's nonce makes it)."""
    sent = {"decision": decision, "reviewer": reviewer, "reason": reason, "nonce": str(next(_CLICKS))}
    return send_state(at, f"review_{form}", "decision", sent)


def grid_frame(at: AppTest, key: str) -> pd.DataFrame:
    """The rows the studio's table `key` (rsr_core/ui/grid.py) was given to draw, as text, by column id."""
    for element_id, data in component_data(at, "rsr_core.grid"):
        if element_id.endswith(f"-{key}"):
            return pd.DataFrame(data["rows"], columns=data["ids"])
    raise AssertionError(f"no table {key!r} on the page")


def figure_values(at: AppTest, key: str) -> dict[str, str]:
    """label -> value of the row of figures `key` (rsr_core/ui/figures.py) on the page."""
    for element_id, data in component_data(at, "rsr_core.figures"):
        if element_id.endswith(f"-{key}"):
            return {f["label"]: f["value"] for f in data["figures"]}
    raise AssertionError(f"no figures {key!r} on the page")


def step_cards(at: AppTest) -> list[dict]:
    """Every step card the page's step views (rsr_core/ui/steps.py) were given to draw, in order."""
    return [
        card
        for _, data in component_data(at, "rsr_core.steps")
        for row in data["rows"]
        for cell in row["cells"]
        for card in cell
    ]


def chart_figures(at: AppTest) -> list[dict]:
    """The plotly figure (data and layout, as sent to the browser) of every chart on the page, in order."""
    return [json.loads(element.proto.spec) for element in at.get("plotly_chart")]


def chart_text(figure: dict) -> str:
    """Every text of a figure (titles, labels, hover texts, annotations) as one JSON string to search."""
    return json.dumps(figure, ensure_ascii=False)
