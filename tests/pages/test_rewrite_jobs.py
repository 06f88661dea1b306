"""The Rewrite page's jobs at scale: the jobs table and a job's units come a page at a time."""

from __future__ import annotations

from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql
from rsr_core.ui.keys import widget_key
from rsr_core.ui.rewrite_views import JOB_ROWS, UNIT_ROWS
from tests.pages.conftest import grid_frame, page


def test_jobs_and_a_jobs_units_are_paged(demo_db):
    store = Store(demo_db)
    with store.transaction() as cur:
        for i in range(JOB_ROWS + 5):
            jobs_sql.create_job(cur, f"job-{i:02d}", {}, scripted=False)
            jobs_sql.set_status(cur, f"job-{i:02d}", "done")
        big = "job-07"
        units = [(f"{big}-u{i:04d}", "execute", {}) for i in range(2 * UNIT_ROWS + 20)]
        jobs_sql.add_units(cur, big, units)
    store.close()

    at = page("rewrite")
    assert not at.exception
    jobs = grid_frame(at, "jobs_table")
    with Store(demo_db).reading() as cur:
        listed = len(jobs_sql.list_jobs(cur))
    assert len(jobs) == JOB_ROWS and listed > JOB_ROWS
    at.number_input(key="jobs_page").set_value(2).run()
    assert len(grid_frame(at, "jobs_table")) == listed - JOB_ROWS

    at.selectbox(key="job_shown").select(big).run()
    assert any(f"units of {big} ({len(units)})" in e.label for e in at.expander)
    first = grid_frame(at, widget_key("units", big))
    assert list(first["unit_id"]) == [u[0] for u in units[:UNIT_ROWS]]
    at.number_input(key=widget_key("units_page", big)).set_value(3).run()
    last = grid_frame(at, widget_key("units", big))
    assert list(last["unit_id"]) == [u[0] for u in units[2 * UNIT_ROWS :]]
