"""Runbook statuses are named once (RUNBOOK_STATUSES, the `runbook_status` view): the queue's filter offers each,
`rsr stats funnel` counts each, and `rsr runbooks list --status` takes each."""

from __future__ import annotations

from rsr_core.cli import build_parser
from rsr_core.store import Store, pipeline
from rsr_core.vocabulary import RUNBOOK_STATUSES
from tests.pages.conftest import page


def test_the_queue_filter_and_the_funnel_cover_every_status(demo_db):
    at = page("runbooks")
    assert not at.exception
    labels = [o for o in at.selectbox(key="rb_status").options if o != "all"]  # "status (rounds)"
    offered = {label.rsplit(" (", 1)[0]: int(label.rsplit(" (", 1)[1].rstrip(")")) for label in labels}
    with Store(demo_db).reading() as cur:
        funnel = pipeline.funnel(cur)
        by_view = dict(cur.execute("SELECT status, count(*) FROM runbook_status GROUP BY ALL").fetchall())
    assert set(by_view) <= set(RUNBOOK_STATUSES)
    assert offered == {s: by_view.get(s, 0) for s in RUNBOOK_STATUSES}
    assert {s: funnel[s] for s in RUNBOOK_STATUSES} == {s: by_view.get(s, 0) for s in RUNBOOK_STATUSES}
    assert sum(funnel[s] for s in RUNBOOK_STATUSES) == funnel["runbooks"]


def test_rsr_runbooks_list_takes_every_status():
    parser = build_parser()
    for status in RUNBOOK_STATUSES:
        assert parser.parse_args(["runbooks", "list", "--status", status]).status == status
