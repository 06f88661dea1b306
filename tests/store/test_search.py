"""Full-text search of the trajectory list: prefixes of indexed words, every word required."""

from __future__ import annotations

from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store, TrajectoryFilter


def _traj(tid: str, keys: str, observation: str = "") -> Trajectory:
    steps = [
        Step(index=1, source="user", message="task"),
        Step(index=2, source="agent", commands=[Command(keystrokes=keys)], observation=observation),
    ]
    return Trajectory(trajectory_id=tid, task_id="t", content_hash=tid, steps=steps)


def _found(store: Store, search: str) -> set[str]:
    rows = store.list_trajectories(TrajectoryFilter(search=search), limit=50)
    assert store.count_trajectories(TrajectoryFilter(search=search)) == len(rows)
    return {r["trajectory_id"] for r in rows}


def test_words_with_underscores_and_prefixes():
    store = Store(":memory:")
    store.write_trajectories(
        [
            _traj("a", "pytest tests/test_outputs.py\n", "2 passed"),
            _traj("b", "python3 report.py\n", "wrote report_v2.csv"),
            _traj("c", "cat testXoutputs\n"),
            _traj("d", "cat test_outputs.txt\n"),
        ]
    )
    assert _found(store, "test_outputs") == {"d"}  # "_" is a character, not a wildcard
    assert _found(store, "tests/test_out") == {"a"}  # words match indexed words by prefix
    assert _found(store, "REPORT") == {"b"}
    assert _found(store, "rep report_v") == {"b"}  # one indexed word may serve two query words
    assert _found(store, "report passed") == set()  # every word must occur
    assert _found(store, "100%") == set()
    assert _found(store, "") == {"a", "b", "c", "d"}


def test_indexed_terms_follow_the_sql_rule_they_replaced():
    """Terms are built in Python now; they must equal DuckDB's lower() + regexp split of the same text."""
    import random

    rng = random.Random(5)
    alphabet = [*"abcXYZ09_.-/ \t|:;,é", "\u0130", "\u212a", "\u00df", "\u03a3", "İstanbul", "x" * 70]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    store = Store(":memory:")
    store.write_trajectories([_traj(f"t{i}", f"{t}\n", observation=t[::-1]) for i, t in enumerate(texts)])
    cur = store.cursor()
    expected = cur.execute(
        r"""
        SELECT DISTINCT term, trajectory_id FROM (
            SELECT trajectory_id, unnest(regexp_split_to_array(
                lower(coalesce(message, '') || ' ' || coalesce(observation, '')), '[^a-z0-9_.\-/]+')) AS term
            FROM steps
            UNION ALL
            SELECT trajectory_id, unnest(regexp_split_to_array(lower(command), '[^a-z0-9_.\-/]+')) FROM commands
        ) WHERE length(term) BETWEEN 2 AND 64 ORDER BY ALL
        """
    ).fetchall()
    assert cur.execute("SELECT term, trajectory_id FROM search_terms ORDER BY ALL").fetchall() == expected
