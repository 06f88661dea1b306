"""A batch scored half in a second process gives the rows of the whole batch scored here, bit for bit; a second
process that is gone leaves its half to this one."""

from __future__ import annotations

import os
import signal

import pandas as pd
import pytest

from rsr_core.analysis.pair_metrics import METRICS
from rsr_core.analysis.similarity import score_pairs
from rsr_core.analysis.similarity_refresh import refresh
from rsr_core.analysis.split_scoring import halves, score_batch
from rsr_core.children import child_pool
from rsr_core.store import Store
from rsr_core.store import similarity_store as stored
from tests.analysis.corpus import run

COMMANDS = [
    "ls -la",
    "grep -rn 'TODO' src/",
    "sort -u out.txt | head",
    "python3 fix.py --n 3",
    "sed -i 's/a/b/' conf.ini",
    "make test",
    "cat README.md",
]


def _corpus() -> list:
    """Tasks of 1 to 9 passed rewrites (a task of one has no pair), commands drawn so that scores vary."""
    out = []
    for t, size in enumerate((5, 1, 9, 3, 2, 7, 4, 6)):
        for i in range(size):
            picks = [COMMANDS[(t * 3 + i * k) % len(COMMANDS)] + f" # {i % 3}" for k in range(1, 2 + i % 4)]
            out.append(run(f"t{t}-r{i}", f"task-{t}", picks, runbook=f"rb{i % 3}"))
    return out


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "split.duckdb")
    s.write_trajectories(_corpus())
    yield s
    s.close()


@pytest.fixture
def batch(store):
    with store.reading() as cur:
        return stored.rewrites_of(cur, [f"task-{t}" for t in range(8)])


@pytest.fixture
def pool():
    p = child_pool(1)
    yield p
    p.shutdown(wait=True, cancel_futures=True)


def test_the_halves_cut_between_tasks_and_hold_every_rewrite(batch):
    rewrites, _ = batch
    first, second = halves(rewrites)
    assert len(first) and len(second)
    assert not set(first["task_id"]) & set(second["task_id"])
    whole = rewrites.sort_values(["task_id", "trajectory_id"], kind="stable")["trajectory_id"].tolist()
    assert first["trajectory_id"].tolist() + second["trajectory_id"].tolist() == whole


def test_one_task_is_not_cut(batch):
    rewrites, _ = batch
    assert halves(rewrites[rewrites["task_id"] == "task-2"]) is None
    assert halves(rewrites.iloc[:0]) is None


def test_the_split_gives_the_rows_of_the_whole_batch(batch, pool):
    rewrites, commands = batch
    whole = score_pairs(rewrites, commands, METRICS)
    split = score_batch(rewrites, commands, METRICS, pool, min_commands=0)
    assert len(whole) == sum(n * (n - 1) // 2 for n in (5, 1, 9, 3, 2, 7, 4, 6))
    pd.testing.assert_frame_equal(split, whole, check_exact=True)


def test_a_small_batch_is_scored_here(batch, pool):
    rewrites, commands = batch
    split = score_batch(rewrites, commands, METRICS, pool)  # far below SPLIT_MIN_COMMANDS
    pd.testing.assert_frame_equal(split, score_pairs(rewrites, commands, METRICS), check_exact=True)


def test_a_second_process_that_is_gone_leaves_its_half_here(batch, pool):
    rewrites, commands = batch
    worker = pool.submit(os.getpid).result()
    assert worker != os.getpid()
    os.kill(worker, signal.SIGKILL)  # the pool's one process, killed as the kernel would
    split = score_batch(rewrites, commands, METRICS, pool, min_commands=0)
    pd.testing.assert_frame_equal(split, score_pairs(rewrites, commands, METRICS), check_exact=True)
    split = score_batch(rewrites, commands, METRICS, pool, min_commands=0)  # the pool known broken now
    pd.testing.assert_frame_equal(split, score_pairs(rewrites, commands, METRICS), check_exact=True)


def test_a_refresh_on_two_processes_stores_what_one_stores(tmp_path, store):
    other = Store(tmp_path / "one.duckdb")
    other.write_trajectories(_corpus())
    try:
        assert refresh(store, processes=2).pairs == refresh(other).pairs > 0
        with store.reading() as a, other.reading() as b:
            pd.testing.assert_frame_equal(stored.pairs(a), stored.pairs(b), check_exact=True)
    finally:
        other.close()


@pytest.mark.parametrize(
    "tasks", [("task-1", "task-2"), ("task-2", "task-1", "task-4"), ("task-1", "task-4")]
)
def test_a_half_without_pairs_adds_none(store, pool, tasks):
    with store.reading() as cur:
        rewrites, commands = stored.rewrites_of(cur, list(tasks))  # task-1 has one rewrite, so no pair
    split = score_batch(rewrites, commands, METRICS, pool, min_commands=0)
    pd.testing.assert_frame_equal(split, score_pairs(rewrites, commands, METRICS), check_exact=True)
