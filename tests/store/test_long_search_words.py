"""A search word longer than any indexed word is refused with its reason, never dropped from the search."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store, TrajectoryFilter
from rsr_core.store.columns import TERM_MAX
from rsr_core.store.queries import SearchError


def _traj(tid: str, keys: str) -> Trajectory:
    steps = [
        Step(index=1, source="user", message="task"),
        Step(index=2, source="agent", commands=[Command(keystrokes=keys)]),
    ]
    return Trajectory(trajectory_id=tid, task_id="t", content_hash=tid, steps=steps)


@pytest.fixture
def store():
    s = Store(":memory:")
    s.write_trajectories([_traj("a", "ls /srv/data\n"), _traj("b", "cat notes.txt\n")])
    yield s
    s.close()


def _found(store: Store, search: str) -> set[str]:
    return {r["trajectory_id"] for r in store.list_trajectories(TrajectoryFilter(search=search))}


@pytest.mark.parametrize("extra", ["", "ls "])
def test_a_word_over_the_indexed_length_is_refused_not_dropped(store, extra):
    # Seen: a 65-character word was dropped, and the search found every trajectory.
    word = "q" * (TERM_MAX + 1)
    for call in (store.list_trajectories, store.count_trajectories):
        with pytest.raises(SearchError) as caught:
            call(TrajectoryFilter(search=extra + word))
        assert str(caught.value) == (
            f"search word {'q' * 40}… has {TERM_MAX + 1} characters; the index holds words of up to {TERM_MAX}, "
            "so it cannot be searched: search for other words of the text"
        )


def test_words_up_to_the_indexed_length_are_searched(store):
    assert _found(store, "q" * TERM_MAX) == set()
    assert _found(store, "/srv/data") == {"a"}
    assert _found(store, "NOTES.TXT /srv") == set()
    assert _found(store, "a") == {"a", "b"}  # one character: too short to search, as before


def test_the_cli_says_so_in_one_line(tmp_path):
    db = str(tmp_path / "x.duckdb")
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "list", "--db", db, "--search", "z" * 100],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"rsr: search word {'z' * 40}… has 100 characters; the index holds words of up to {TERM_MAX}, so it "
        "cannot be searched: search for other words of the text"
    ]
