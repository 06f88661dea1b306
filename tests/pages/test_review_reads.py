"""How often the review queue opens the database, in runs of the studio's own navigation script (one use of
the file per run, as the server runs it): a recorded review and the reads after it share one opening and the
next run needs none, and "next pending" shows a round read ahead in the background without opening it."""

from __future__ import annotations

import gc
import threading

import pytest
from streamlit.testing.v1 import AppTest

from rsr_core.store import Store, app_queries, pipeline
from rsr_core.store import store as store_module
from rsr_core.ui.server import NAVIGATION
from tests.pages.conftest import grid_frame


@pytest.fixture
def opens(monkeypatch) -> list[str]:
    """Every opening of a database file by this process, in order (the real `connect` still opens it)."""
    opened: list[str] = []
    real = store_module.connect

    def counting(path, read_only=False):
        opened.append(str(path))
        return real(path, read_only)

    monkeypatch.setattr(store_module, "connect", counting)
    yield opened
    gc.unfreeze()  # the navigation script freezes the heap after a page's first run, as in the server


def _runbooks() -> AppTest:
    at = AppTest.from_file(str(NAVIGATION), default_timeout=60)
    at.switch_page("screens/runbooks.py")
    return at.run()


def _prefetched() -> None:
    """Wait for the background reads a run started."""
    for thread in threading.enumerate():
        if thread.name == "prefetch":
            thread.join(30)


def test_a_review_and_the_reads_after_it_share_one_opening_and_the_next_run_needs_none(demo_db, opens):
    at = _runbooks()
    at.selectbox(key="rb_status").select("pending_review").run()
    (rid,) = grid_frame(at, "rb_queue")["runbook_id"]
    at.text_input(key="reviewer_focus").input("erin")
    _prefetched()
    opens.clear()
    at.button(key="FormSubmitter:review_focus-approve (1)").click().run()
    assert not at.exception
    assert grid_frame(at, "rb_queue").empty  # read after the write: no longer pending
    assert opens == [str(demo_db)]  # the write and every read after it (it was two openings)
    opens.clear()
    at.run()
    # Nothing changed since: the file's signature is the one the reads were cached under (the write was
    # checkpointed at once, not when the file was let go, which changed the file again after the reads).
    assert opens == []
    assert [r.decision for r in pipeline.reviews_of(Store(demo_db).cursor(), rid)] == ["approve"]


def test_next_pending_shows_a_round_read_ahead_without_opening_the_database(demo_db, opens):
    store = Store(demo_db)
    with store.reading() as cur:
        (pending,) = app_queries.runbook_queue(cur, "pending_review")["runbook_id"]
        first = pipeline.get_runbook(cur, pending)
    second = first.model_copy(
        update={"runbook_id": f"{first.runbook_id}-b", "lineage_id": f"{first.lineage_id}-b", "variant": 9}
    )
    with store.transaction() as cur:
        pipeline.insert_runbook(cur, second)
    store.close()
    at = _runbooks()
    at.selectbox(key="rb_status").select("pending_review").run()
    assert list(grid_frame(at, "rb_queue")["runbook_id"]) == [first.runbook_id, second.runbook_id]
    assert at.session_state["rb_focus"] == first.runbook_id
    _prefetched()
    opens.clear()
    at.button(key="rb_next_btn").click().run()
    assert not at.exception
    assert at.session_state["rb_focus"] == second.runbook_id
    assert second.runbook_id in at.subheader[0].value.replace("\\", "")
    assert opens == []  # its rounds, flags, reviews and executions were read while the first was shown
