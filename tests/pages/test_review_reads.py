"""How often the review queue opens and reads the database, in runs of the studio's own navigation script (one
use of the file per run, as the server runs it): a recorded review and the reads after it share one opening,
the queue is not read again whole after it (the reviewed rounds are) and the next run needs none, and "next
pending" shows a round read ahead in the background without opening it."""

from __future__ import annotations

import gc
import random
import threading

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from rsr_core.models import Review
from rsr_core.store import Store, app_queries, pipeline
from rsr_core.store import store as store_module
from rsr_core.ui.grid import cell
from rsr_core.ui.server import NAVIGATION
from tests.pages.conftest import component_data, grid_frame, submit_review


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
    _prefetched()
    opens.clear()
    submit_review(at, "focus", "approve", "erin")
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


@pytest.fixture
def queue_reads(monkeypatch) -> list[tuple]:
    """Every whole read of the review queue (the real query still runs)."""
    calls: list[tuple] = []
    real = app_queries.runbook_queue

    def counting(cur, *args):
        calls.append(args)
        return real(cur, *args)

    monkeypatch.setattr(app_queries, "runbook_queue", counting)
    return calls


def test_after_a_review_the_page_shows_what_a_fresh_read_shows_without_reading_the_queue_again(
    demo_db, opens, queue_reads
):
    at = _runbooks()
    pending = at.session_state["rb_focus"]
    _prefetched()
    queue_reads.clear()
    submit_review(at, "focus", "reject", "erin", "leaks the expected output")
    assert not at.exception
    assert queue_reads == []  # the reviewed round was read again, not the whole queue
    with Store(demo_db).reading() as cur:
        fresh = app_queries.runbook_queue(cur)
        history = pipeline.reviews_of(cur, pending)
        reviewed = cur.execute("SELECT count(DISTINCT runbook_id) FROM reviews").fetchone()[0]
    queue_reads.clear()  # this test's own read
    shown = grid_frame(at, "rb_queue")
    assert list(shown["runbook_id"]) == list(
        fresh["runbook_id"]
    )  # the order too: pending first, then by task
    assert shown.to_dict("records") == fresh[list(shown.columns)].map(cell).to_dict("records")
    assert fresh.loc[fresh["runbook_id"] == pending, "status"].item() == "human_rejected"
    assert "human\\_rejected" in at.subheader[0].value
    assert [r.reviewer for r in history] == ["erin"]
    assert grid_frame(at, "rb_reviews")["reason"].tolist() == ["leaks the expected output"]
    ((_, progress),) = component_data(at, "rsr_core.bars")
    labels = [bar["label"] for bar in progress["bars"]]
    assert labels[0].startswith(f"reviewed {reviewed} of ")  # the review progress, read in the same write
    assert "erin: 1 runbooks (0 approvals, 1 rejections)" in labels
    opens.clear()
    at.run()
    assert opens == [] and queue_reads == []  # what the review left in the cache is what the next run reads


def _with_a_round_the_critic_has_not_passed(store: Store) -> str:
    """A copy of a demo round whose critic verdict is still pending (the demo has none): its id."""
    with store.reading() as cur:
        (rid,) = app_queries.runbook_queue(cur, "pending_review")["runbook_id"]
        first = pipeline.get_runbook(cur, rid)
    pending = first.model_copy(
        update={"runbook_id": f"{rid}-p", "lineage_id": f"{first.lineage_id}-p", "critic_verdict": "pending"}
    )
    with store.transaction() as cur:
        pipeline.insert_runbook(cur, pending)
    return pending.runbook_id


@pytest.mark.parametrize("seed", range(12))
def test_the_queue_with_the_reviewed_rounds_read_back_is_what_a_fresh_read_gives(demo_db, seed):
    """Reviews of random rounds (pending, approved, human- and critic-rejected, critic-pending, one not in the
    queue, the same round twice) by reviewers who did and did not decide on them before: the queue with the
    reviewed rounds' rows read back equals reading it whole again, and the reviews come back as stored."""
    rng = random.Random(seed)
    store = Store(demo_db)
    extra = _with_a_round_the_critic_has_not_passed(store)
    with store.reading() as cur:
        before = app_queries.runbook_queue(cur)
    ids = [*rng.sample(list(before["runbook_id"]), 5), "rb-not-in-the-queue"]
    reviewers = ["alice (scripted demo review)", "bob (scripted demo review)", "q", "r"]
    for _ in range(4):  # batch after batch, so rounds have histories by several reviewers
        batch = [(rng.choice(ids), rng.choice(["approve", "reject"]), rng.choice(reviewers))]
        batch += [(batch[0][0], rng.choice(["approve", "reject"]), rng.choice(reviewers))] * rng.randint(0, 1)
        batch += [(rng.choice(ids), batch[0][1], batch[0][2]) for _ in range(rng.randint(0, 4))]
        batch += [(extra, batch[0][1], batch[0][2])] * (seed % 3 == 0)
        with store.transaction() as cur:
            stored = [
                pipeline.insert_review(cur, Review(runbook_id=rid, decision=d, reviewer=who, reason=""))
                for rid, d, who in batch
            ]
            patched = app_queries.queue_with_rows(
                before, app_queries.queue_rows(cur, [r for r, _, _ in batch])
            )
            whole = app_queries.runbook_queue(cur)
            histories = {rid: pipeline.reviews_of(cur, rid) for rid, _, _ in batch}
        pd.testing.assert_frame_equal(patched, whole)
        for review in stored:  # each as reviews_of reads it (created_at included), in order
            assert review in histories[review.runbook_id]
            assert (
                histories[review.runbook_id][-1]
                == [r for r in stored if r.runbook_id == review.runbook_id][-1]
            )
        before = whole
    statuses = set(before["status"])
    assert {"approved", "critic_rejected", "critic_pending"} <= statuses


def test_a_review_leaves_a_round_the_critic_rejected_or_has_not_passed_as_it_was(demo_db):
    """The status a review leaves is the `runbook_status` view's: a human decision decides a round the critic
    passed, and leaves one it rejected or has not judged as it was."""
    store = Store(demo_db)
    extra = _with_a_round_the_critic_has_not_passed(store)
    with store.reading() as cur:
        queue = app_queries.runbook_queue(cur)
    rejected = queue.loc[queue["status"] == "critic_rejected", "runbook_id"].iloc[0]
    passed = queue.loc[queue["status"] == "pending_review", "runbook_id"].iloc[0]
    for decision, decided in (("reject", "human_rejected"), ("approve", "approved")):
        with store.transaction() as cur:
            for rid in (rejected, extra, passed):
                pipeline.insert_review(
                    cur, Review(runbook_id=rid, decision=decision, reviewer="q", reason="")
                )
            rows = app_queries.queue_rows(cur, [rejected, extra, passed])
        status = dict(zip(rows["runbook_id"], rows["status"], strict=True))
        assert status == {rejected: "critic_rejected", extra: "critic_pending", passed: decided}
