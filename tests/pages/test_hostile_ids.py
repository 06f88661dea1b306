"""Every trajectory a real or hostile corpus holds opens on the Trajectories page (AppTest): ids of any
characters, no steps, 10,000 steps; step numbers from a URL are checked; what a page raises is one error box."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from rsr_core.ui.text import shown
from rsr_core.ui.widgets import md_escape
from tests.hostile_ids import IDS, MANY_STEPS, NO_STEPS, write_corpus
from tests.pages.conftest import ROOT, grid_frame, page, step_cards


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> tuple[str, dict[str, int]]:
    """The hostile-id corpus and the real harbor and Terminal-Bench fixtures, ingested by `rsr ingest`."""
    tmp = tmp_path_factory.mktemp("hostile")
    shapes = write_corpus(tmp / "corpus")
    db = tmp / "hostile.duckdb"
    sources = [tmp / "corpus", ROOT / "tests/data/harbor_real/jobs", ROOT / "tests/data/tb1_real/runs"]
    subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "ingest", *map(str, sources), "--db", str(db)],
        check=True,
        capture_output=True,
    )
    return str(db), shapes


@pytest.fixture
def hostile(hostile_db, monkeypatch) -> dict[str, int]:
    monkeypatch.setenv("RSR_DB", hostile_db[0])
    return hostile_db[1]


def _all_ids() -> list[str]:
    from tests.pages.conftest import open_services

    return [r["trajectory_id"] for r in open_services().store.list_trajectories(limit=10_000)]


def test_every_trajectory_of_the_corpus_opens_alone_and_beside_another(hostile):
    ids = _all_ids()
    assert set(hostile) <= set(ids) and any("__" in i for i in ids if i not in hostile)  # harbor's trials too
    for tid in ids:
        at = page("trajectories", trajectory=tid)
        assert not at.exception, (tid, at.exception)
        assert at.subheader[0].value == md_escape(tid)
        assert not at.error, (tid, [e.value for e in at.error])
        steps = hostile.get(tid)
        if steps == 0:
            assert "no steps" in at.info[-1].value and not step_cards(at)
        elif steps is not None:
            assert len(step_cards(at)) == min(steps, 25)
    for a, b in itertools.pairwise(ids):
        at = AppTest.from_file(str(ROOT / "rsr_core/ui/screens/trajectories.py"), default_timeout=60)
        at.query_params["compare"] = [a, b]
        at.run()
        assert not at.exception and not at.error, (a, b)
        assert [s.value for s in at.subheader] == [md_escape(a), md_escape(b)]


def test_invisible_characters_are_shown_as_escapes_in_titles_and_tables(hostile):
    bidi = next(i for i in IDS if "\u202e" in i)
    at = page("trajectories", trajectory=bidi)
    assert "\u202e" not in at.subheader[0].value and "\\\\u202e" in at.subheader[0].value
    at = page("trajectories")
    listed = grid_frame(at, "list_table")["trajectory_id"].tolist()
    assert shown(bidi) in listed and not any("\u202e" in x or "\u200b" in x for x in listed)


def test_a_step_too_far_or_not_a_number_is_an_error_not_a_traceback(hostile):
    for step in ["²", "٣", "1" * 5000, "-1", "0x10", " 3"]:
        at = page("trajectories", trajectory=MANY_STEPS, step=step)
        assert not at.exception, step
        assert "must be a step number" in at.error[0].value, step
    at = page("trajectories", trajectory=MANY_STEPS, step="10001")
    assert not at.exception and "has no step 10001" in at.error[0].value.replace("\\", "")
    at = page("trajectories", trajectory=MANY_STEPS, step="9999")
    assert not at.exception and next(c["title"] for c in step_cards(at) if c["highlight"]).startswith(
        "step 9999"
    )
    at = page("trajectories", trajectory=NO_STEPS, step="1")
    assert not at.exception and "no steps" in at.info[-1].value


def _failing_page() -> None:
    from rsr_core.ui.navigation import run_shown

    def boom() -> None:
        raise ValueError("the page broke at /secret/checkout/path.py")

    run_shown(boom)


def _refusing_page() -> None:
    from rsr_core.errors import RsrError
    from rsr_core.ui.navigation import run_shown

    def refuse() -> None:
        raise RsrError("db.duckdb is not an RSR Studio database")

    run_shown(refuse)


def test_what_a_page_raises_is_one_error_box_and_the_traceback_stays_in_the_log(capfd):
    at = AppTest.from_function(_failing_page).run()
    assert not at.exception
    [box] = at.error
    assert "ValueError" in box.value and "log of the studio" in box.value and "Traceback" not in box.value
    log = capfd.readouterr().err  # Streamlit's logger writes the server's log to stderr
    assert "Traceback" in log and "ValueError: the page broke" in log
    at = AppTest.from_function(_refusing_page).run()
    assert not at.exception
    assert [e.value for e in at.error] == [md_escape("db.duckdb is not an RSR Studio database")]


@pytest.mark.parametrize("name", ["overview", "trajectories", "diff", "runbooks", "similarity", "export"])
def test_every_page_runs_on_the_hostile_corpus(hostile, name):
    at = page(name)
    assert not at.exception, at.exception


@pytest.mark.parametrize("value", ["x__y", "\u202e", "9" * 5000, "../../etc/passwd", ""])
def test_a_runbook_link_to_nothing_is_said_not_raised(demo_db, value):
    at = page("runbooks", runbook=value)
    assert not at.exception, at.exception


def test_thinking_is_folded_apart_and_a_missing_response_is_said(demo_db):
    from rsr_core.models import Step, Trajectory
    from tests.pages.conftest import open_services

    steps = [
        Step(index=1, source="user", message="go"),
        Step(index=2, source="agent", reasoning="<b>weigh</b> it", analysis="a", plan="p"),
        Step(
            index=3,
            source="agent",
            extra={"missing_response": True, "note": "episode-1/response.txt is missing"},
        ),
    ]
    trajectory = Trajectory(
        trajectory_id="think", task_id="t", harness="terminus-2", content_hash="h", steps=steps
    )
    open_services().store.write_trajectories([trajectory])
    cards = step_cards(page("trajectories", trajectory="think"))
    assert cards[1]["blocks"][0] == {
        "kind": "thinking",
        "label": "thinking (15 characters)",
        "text": "<b>weigh</b> it",
    }
    assert cards[1]["blocks"][1]["text"] == "Analysis: a\nPlan: p"
    assert [b["text"] for b in cards[2]["blocks"]] == ["episode-1/response.txt is missing"]


def test_a_hand_off_summary_is_said_to_be_one(demo_db):
    from rsr_core.models import Step, Trajectory
    from tests.pages.conftest import open_services

    summary = Step(index=2, source="agent", message="did x", harness_control=True,
                   extra={"handoff": {"request": [], "dropped_messages": 4}})  # fmt: skip
    trajectory = Trajectory(trajectory_id="ho", task_id="t", harness="terminus-2", content_hash="h",
                            steps=[Step(index=1, source="user", message="go"), summary])  # fmt: skip
    open_services().store.write_trajectories([trajectory])
    blocks = step_cards(page("trajectories", trajectory="ho"))[1]["blocks"]
    assert "outgrew its context" in blocks[0]["text"] and "4 earlier messages" in blocks[0]["text"]
    assert blocks[1]["text"] == "did x" and not any("not valid protocol JSON" in b["text"] for b in blocks)
