"""A job's cost from its units' usage summed in the database equals the sum of its units' costs one by one."""

from __future__ import annotations

import random

import pytest

from rsr_core.analysis.cost import cost_usd, job_costs
from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql

PRICES = {"priced-a": (3.0, 15.0), "priced-b": (0.5, 1.5)}
MODELS = ("priced-a", "priced-b", "unpriced", None)


def _unit_by_unit(cur, job_id: str) -> float | None:
    """What the job table showed before: every finished unit's cost, one by one."""
    total = 0.0
    for model, p, c, recorded in cur.execute(
        "SELECT model, prompt_tokens, completion_tokens, cost_usd FROM work_units "
        "WHERE job_id = ? AND status = 'done' ORDER BY unit_id",
        [job_id],
    ).fetchall():
        cost = cost_usd(model, p, c, recorded, PRICES)
        if cost is None and (p or c):
            return None
        total += cost or 0.0
    return round(total, 6)


@pytest.mark.parametrize("seed", range(6))
def test_job_costs_from_summed_usage_match_the_units_one_by_one(tmp_path, seed):
    rng = random.Random(seed)
    store = Store(tmp_path / "jobs.duckdb")
    with store.transaction() as cur:
        for j in range(5):
            job = f"job-{j}"
            jobs_sql.create_job(cur, job, {}, scripted=False)
            units = [
                (f"{job}-u{i:03d}", rng.choice(jobs_sql.UNIT_KINDS), {}) for i in range(rng.randrange(0, 40))
            ]
            jobs_sql.add_units(cur, job, units)
            models = MODELS if j != 0 else ("priced-a", "priced-b")  # one job every unit of which is priced
            for unit_id, _, _ in units:
                if rng.random() < 0.2:
                    continue  # not finished: not counted
                tokens = rng.choice((None, 0, rng.randrange(1, 50_000)))
                usage = {"model": rng.choice(models), "prompt_tokens": tokens,
                         "completion_tokens": rng.choice((None, 0, rng.randrange(1, 5_000)))}  # fmt: skip
                jobs_sql.mark_done(cur, unit_id, {}, usage)
                if rng.random() < 0.3:  # a cost the run recorded (or a NaN one, which is no record)
                    recorded = rng.choice((round(rng.uniform(0, 2), 4), float("nan")))
                    cur.execute("UPDATE work_units SET cost_usd = ? WHERE unit_id = ?", [recorded, unit_id])
        # One unit of tokens at no price and with no recorded cost: its job's cost is unknown.
        jobs_sql.add_units(cur, "job-4", [("job-4-unpriced", "execute", {})])
        jobs_sql.mark_done(cur, "job-4-unpriced", {}, {"model": "unpriced", "prompt_tokens": 10})
    with store.reading() as cur:
        usage = jobs_sql.usage_by_job(cur)
        costs = job_costs(usage, PRICES)
        for j in range(5):
            expected = _unit_by_unit(cur, f"job-{j}")
            got = costs.get(f"job-{j}", 0.0)
            assert (got is None) == (expected is None), (j, got, expected)
            if expected is not None:  # both rounded to 6 places: a last digit apart at most
                assert got == pytest.approx(expected, abs=2e-6), (j, got, expected)
        # A few rows per job whatever its number of units.
        assert len(usage) <= 5 * len(MODELS) * 2
    assert costs["job-4"] is None
    assert costs.get("job-0", 0.0) is not None  # every unit priced or recorded: a figure


def test_units_of_a_job_come_a_page_at_a_time_in_the_order_of_all_of_them(tmp_path):
    store = Store(tmp_path / "jobs.duckdb")
    with store.transaction() as cur:
        jobs_sql.create_job(cur, "j", {}, scripted=False)
        jobs_sql.add_units(cur, "j", [(f"u{i:03d}", "plan", {}) for i in range(120)])
    with store.reading() as cur:
        every = [u["unit_id"] for u in jobs_sql.units_of(cur, "j")]
        pages = [[u["unit_id"] for u in jobs_sql.units_of(cur, "j", offset, 50)] for offset in (0, 50, 100)]
    assert len(every) == 120 and [len(p) for p in pages] == [50, 50, 20]
    assert [u for p in pages for u in p] == every
