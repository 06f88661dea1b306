"""Stored pair scores (migration 4): equal to fresh ones, rescored only for the tasks whose passed rewrites changed,
and `rsr similarity --json` prints the same with or without them."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rsr_core.analysis.pair_metrics import METRICS
from rsr_core.analysis.similarity import score_pairs, summarise
from rsr_core.analysis.similarity_refresh import is_current, refresh
from rsr_core.cli import main
from rsr_core.store import Store, analysis_queries
from rsr_core.store import similarity_store as stored
from tests.analysis.corpus import run
from tests.analysis.test_similarity import CORPUS

MORE = [  # a second task with enough rewrites to have fuzzy scores that are not round numbers
    run(
        f"m{i}",
        "t4",
        [f"grep -n 'item {i}' data/{i % 3}.txt", "sort -u out.txt | head", f"python3 fix.py --n {i}"],
        runbook=f"rb{i % 2}",
    )
    for i in range(6)
]


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "sim.duckdb")
    s.write_trajectories(CORPUS + MORE)
    yield s
    s.close()


def _fresh(store: Store) -> pd.DataFrame:
    with store.reading() as cur:
        return score_pairs(
            analysis_queries.passed_rewrites(cur), analysis_queries.passed_rewrite_commands(cur)
        )


def _stored(store: Store) -> pd.DataFrame:
    with store.reading() as cur:
        return stored.pairs(cur)


def _cli(capsys, db: str, *argv: str) -> str:
    assert main(["similarity", "--db", db, "--json", *argv]) == 0
    return capsys.readouterr().out


def test_stored_scores_equal_fresh_ones(store):
    assert not is_current(store)
    report = refresh(store)
    assert report.scored_tasks == 4 and report.reports and is_current(store)  # t1-t4; t3 has no pair
    fresh, kept = _fresh(store), _stored(store)
    pd.testing.assert_frame_equal(
        kept.drop(columns="category"), fresh.drop(columns="category"), check_exact=True
    )
    assert len(kept) == 3 + 6 + 15


def test_only_the_changed_task_is_rescored(store):
    refresh(store)
    with store.reading() as cur:
        before = cur.execute("SELECT task_id, scored_at FROM similarity_tasks ORDER BY task_id").fetchall()
    store.write_trajectories([run("N", "t2", ["make", "make install"], runbook="rb3")])
    with store.reading() as cur:
        assert stored.stale(cur) == (["t2"], [])
    report = refresh(store)
    assert report.scored_tasks == 1 and report.reports
    with store.reading() as cur:
        after = dict(cur.execute("SELECT task_id, scored_at FROM similarity_tasks").fetchall())
    unchanged = {t: at for t, at in before if t != "t2"}
    assert all(after[t] == at for t, at in unchanged.items()) and after["t2"] != dict(before)["t2"]
    pd.testing.assert_frame_equal(
        _stored(store).drop(columns="category"), _fresh(store).drop(columns="category"), check_exact=True
    )
    assert refresh(store).scored_tasks == 0  # nothing changed since


def test_a_task_that_loses_its_passed_rewrites_is_dropped(store):
    refresh(store)
    with store.transaction() as cur:
        cur.execute("UPDATE trajectories SET reward = 0 WHERE task_id = 't2'")
    report = refresh(store)
    assert report.dropped_tasks == 1
    assert "t2" not in set(_stored(store)["task_id"]) and is_current(store)


@pytest.mark.parametrize("metric", METRICS)
def test_rsr_similarity_prints_the_same_from_stored_scores(store, capsys, metric):
    db = store.path
    fresh = _cli(capsys, db, "--metric", metric)
    fresh_task = _cli(capsys, db, "--metric", metric, "--task", "t4")
    refresh(store)
    with store.reading() as cur:  # the stored report is what is printed
        assert stored.reports(cur, stored.overall_fingerprint(cur))[metric] == json.loads(fresh)
    assert _cli(capsys, db, "--metric", metric) == fresh
    assert _cli(capsys, db, "--metric", metric, "--task", "t4") == fresh_task


def test_stale_stored_scores_are_not_used(store, capsys):
    refresh(store)
    with store.transaction() as cur:  # scores that no longer match the data would show if they were used
        cur.execute("UPDATE similarity_pairs SET exact = 0.0")
    assert (
        json.loads(_cli(capsys, store.path, "--task", "t4"))["same_runbook"]["mean"] == 0.0
    )  # current: used
    store.write_trajectories([run("N", "t1", ["ls"], runbook="rb2")])
    fresh = _fresh(store)
    assert json.loads(_cli(capsys, store.path)) == summarise(fresh, "exact")  # report stale: scored now
    t1 = fresh[fresh["task_id"] == "t1"].reset_index(drop=True)
    assert json.loads(_cli(capsys, store.path, "--task", "t1")) == summarise(t1, "exact")


def test_the_stored_version_changes_with_the_scores_and_categories_not_with_other_writes(store):
    from rsr_core.models import Review, Task
    from rsr_core.store import pipeline

    def version() -> str:
        with store.reading() as cur:
            return stored.stored_version(cur)

    refresh(store)
    scored = version()
    with store.transaction() as cur:  # a review, as the Runbooks page writes one
        pipeline.insert_review(cur, Review(runbook_id="rb1", decision="approve", reviewer="q"))
    store.write_trajectories([run("N", "t2", ["make", "make install"], runbook="rb3")])
    assert version() == scored  # a new passed rewrite: not scored yet, the stored scores are as they were
    refresh(store)
    rescored = version()
    assert rescored != scored
    store.write_task(Task(task_id="t2", category="build-systems"), "h1")  # the views group by category
    assert version() != rescored
