"""The studio's plotly charts (rsr_core/ui/plots.py) with AppTest on the demo database: what hover names, that a
click on a pair's mark opens that pair side by side, and that corpus text reaches plotly escaped."""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from rsr_core.analysis.coverage import harness_frame
from rsr_core.store import queries
from rsr_core.ui import plots
from tests.pages.conftest import ROOT, chart_figures, open_services, page


@pytest.fixture
def scored(demo_db):
    """The demo database with its similarity scores stored."""
    from rsr_core.analysis.similarity_refresh import refresh

    refresh(open_services().store)
    return demo_db


def _stored(sql: str, *params) -> list[tuple]:
    with open_services().store.transaction() as cur:
        return cur.execute(sql, list(params)).fetchall()


def _in_studio(name: str) -> AppTest:
    """A page run inside the studio's navigation (as `rsr app` serves it), so that it can open another page."""
    at = AppTest.from_file(str(ROOT / "rsr_core" / "ui" / "navigation.py"), default_timeout=60)
    at.switch_page(f"screens/{name}.py")
    return at.run()


def _heatmap_page() -> AppTest:
    at = _in_studio("similarity")
    at.radio(key="sim_view").set_value("pairwise heatmap of one task").run()
    assert not at.exception, at.exception
    return at


def _select(at: AppTest, key: str, points: list[dict]) -> AppTest:
    """Run the page as the browser does after a click selected `points` in the plotly chart `key`."""
    (element_id,) = [e.proto.id for e in at.get("plotly_chart") if e.proto.id.endswith(f"-{key}")]
    states = at._tree.get_widget_states()  # noqa: SLF001 - what .run() sends, plus the selection below
    state = states.widgets.add()
    state.id = element_id
    selection = {
        "points": points,
        "point_indices": [p.get("point_index", 0) for p in points],
        "box": [],
        "lasso": [],
    }
    state.string_value = json.dumps({"selection": selection})
    return at._run(states)  # noqa: SLF001


def test_heatmap_cells_name_their_pair_and_score_in_both_halves(scored):
    at = _heatmap_page()
    (figure,) = chart_figures(at)
    title = figure["layout"]["title"]["text"]
    task = title.split(": ", 1)[1].removesuffix(" by runbook")
    stored = _stored("SELECT trajectory_a, trajectory_b, exact FROM similarity_pairs WHERE task_id = ?", task)
    assert stored
    (cells,) = figure["data"]
    drawn = {}
    for text, colour in zip(cells["hovertext"], cells["marker"]["color"], strict=True):
        row, column = (part.split(" · ")[-1] for part in text.removeprefix("row ").split("<br>column "))
        drawn[(row, column)] = colour
    assert len(drawn) == len(cells["hovertext"]) == 2 * len(stored)  # every pair, both halves, nothing else
    for a, b, score in stored:
        assert drawn[(a, b)] == pytest.approx(score, abs=1e-3) and drawn[(b, a)] == pytest.approx(
            score, abs=1e-3
        )
    assert len(json.dumps(figure)) < 100_000  # a summary, not a page of its own


def test_clicking_a_heatmap_cell_opens_that_pair_side_by_side(scored):
    at = _heatmap_page()
    (figure,) = chart_figures(at)
    cells = figure["data"][0]
    k = len(cells["customdata"]) - 1  # the last cell: a pair drawn in the lower half
    row, column = (
        p.split(" · ")[-1] for p in cells["hovertext"][k].removeprefix("row ").split("<br>column ")
    )
    at = _select(at, "sim_chart_heatmap", [{"customdata": cells["customdata"][k], "point_index": k}])
    assert not at.exception, at.exception
    assert at.title[0].value == "Trajectories" and at.query_params["compare"] in (
        [column, row],
        [row, column],
    )


def test_a_selection_naming_no_pair_opens_nothing(scored):
    at = _heatmap_page()
    at = _select(at, "sim_chart_heatmap", [{"customdata": [10_000_000], "point_index": 0}])
    assert not at.exception and "compare" not in at.query_params
    assert chart_figures(at)  # still the Similarity page


def test_per_task_boxes_name_their_median_pair_and_open_it(scored):
    at = _in_studio("similarity")
    at.radio(key="sim_view").set_value("per task").run()
    (figure,) = chart_figures(at)
    medians = [t for t in figure["data"] if t["type"] == "scatter"]
    assert {t["name"] for t in medians} == {"same-runbook", "cross-runbook"}
    checked = 0
    for marker in medians:
        relation = marker["name"] == "same-runbook"
        for text in marker["hovertext"]:
            assert "median pair" in text and "pairs" in text and "quartiles" in text
            task = text.split(" · ")[0].removeprefix("task ")
            a, b = text.split("median pair ")[1].removesuffix(" (click to open)").split(" × ")
            sql = "SELECT trajectory_a, trajectory_b, exact FROM similarity_pairs WHERE task_id = ? AND same_runbook = ?"
            scores = _stored(sql, task, relation)
            values = pd.Series([s for *_, s in scores])
            chosen = next(s for x, y, s in scores if (x, y) == (a, b))
            # The pair closest to the median of its box.
            assert abs(chosen - values.median()) == min(abs(values - values.median())), (task, relation)
            checked += 1
    assert checked >= 4
    marker = medians[0]
    text = marker["hovertext"][0]
    a, b = text.split("median pair ")[1].removesuffix(" (click to open)").split(" × ")
    at = _select(at, "sim_chart_task", [{"customdata": marker["customdata"][0], "point_index": 0}])
    assert not at.exception and at.title[0].value == "Trajectories" and at.query_params["compare"] == [a, b]


@pytest.mark.parametrize(
    ("view", "key", "group_sql"),
    [
        ("by metric", "sim_chart_metric", None),
        ("per category", "sim_chart_category", "coalesce(k.category, '(none)')"),
    ],
)
def test_metric_and_category_boxes_name_their_median_pair_and_open_it(scored, view, key, group_sql):
    at = _in_studio("similarity")
    at.radio(key="sim_view").set_value(view).run()
    (figure,) = chart_figures(at)
    medians = [t for t in figure["data"] if t["type"] == "scatter"]
    assert {t["name"] for t in medians} == {"same-runbook", "cross-runbook"}
    labels = {plots.METRIC_LABELS[m]: m for m in plots.METRIC_LABELS}
    checked = 0
    for marker in medians:
        relation = marker["name"] == "same-runbook"
        for text in marker["hovertext"]:
            group = text.split(" · ")[0].split(" ", 1)[1]
            a, b = text.split("median pair ")[1].removesuffix(" (click to open)").split(" × ")
            if group_sql is None:  # one metric over every pair
                metric, where, params = labels[group], "", []
            else:  # the page's default metric, the pairs of one category
                metric, where, params = "exact", f"AND {group_sql} = ?", [group]
            sql = (
                f"SELECT p.trajectory_a, p.trajectory_b, p.{metric} FROM similarity_pairs p "
                f"LEFT JOIN tasks k USING (task_id) WHERE p.same_runbook = ? {where}"
            )
            scores = _stored(sql, relation, *params)
            values = pd.Series([v for *_, v in scores])
            chosen = next(v for x, y, v in scores if (x, y) == (a, b))
            assert abs(chosen - values.median()) == min(abs(values - values.median())), (group, relation)
            checked += 1
    assert checked >= 2
    text = medians[0]["hovertext"][0]
    a, b = text.split("median pair ")[1].removesuffix(" (click to open)").split(" × ")
    at = _select(at, key, [{"customdata": medians[0]["customdata"][0], "point_index": 0}])
    assert not at.exception and at.title[0].value == "Trajectories" and at.query_params["compare"] == [a, b]


def _numbers(values) -> list:
    """A figure's numbers as plotly sends them: a list, or a typed array in base64."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return list(values)


def test_overview_charts_are_plotly_figures_with_counts_on_hover(demo_db):
    at = page("overview")
    bars, upset, funnel = chart_figures(at)
    attempted = next(t for t in bars["data"] if t["name"] == "attempted")
    with open_services().store.transaction() as cur:
        coverage = queries.coverage(cur)
    frame = harness_frame(coverage)
    expected = dict(zip(frame["harness"], frame["attempted_tasks"], strict=True))
    assert dict(zip(attempted["x"], _numbers(attempted["y"]), strict=True)) == expected
    assert "attempted" in attempted["hovertemplate"]
    kept = [t for t in funnel["data"] if "kept for training" in t["y"]]
    assert kept and "%{x:,d}" in kept[0]["hovertemplate"]
    assert any("solved by exactly" in t.get("hovertemplate", "") for t in upset["data"])


def test_corpus_text_reaches_plotly_escaped():
    """plotly reads tags in its labels and the studio shows invisible characters as escapes."""
    hostile = "<a href='x'>t</a>\u202egnp.exe"
    assert plots.label(hostile) == "&lt;a href='x'&gt;t&lt;/a&gt;\\u202egnp.exe"
    pairs = pd.DataFrame(
        {
            "trajectory_a": [hostile],
            "trajectory_b": ["<b>b"],
            "runbook_a": ["rb"],
            "runbook_b": ["rb"],
            "exact": [0.5],
        }
    )
    chart = plots.heatmap(pairs, "exact", "<i>task</i>")
    text = chart.figure.to_json()
    assert "<a href" not in text and "<b>b" not in text and "<i>task" not in text and "\u202e" not in text
    assert chart.pairs == [(hostile, "<b>b")]  # the click opens the stored ids, not their shown form
