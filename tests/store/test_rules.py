"""The rule "solved" in Python (`rules.solved`) gives the answers of the store's SQL macro `rsr_solved`."""

from __future__ import annotations

import itertools

from rsr_core.store import migrations
from rsr_core.store.rules import SOLVED_SQL, solved

REWARDS = (None, -1.0, 0.0, 0.5, 0.999999, 1.0, 1.5)
TAMPERED = (None, False, True)


def test_python_and_sql_agree_on_every_reward_and_tampering(store):
    cur = store.cursor()
    for reward, tampered in itertools.product(REWARDS, TAMPERED):
        (in_sql,) = cur.execute("SELECT rsr_solved(?::DOUBLE, ?::BOOLEAN)", [reward, tampered]).fetchone()
        assert solved(reward, tampered) is in_sql, (reward, tampered)
    assert solved(1.0) and not solved(0.99) and not solved(None) and not solved(1.0, True)


def test_the_macro_is_created_with_the_body_the_module_names():
    created = [sql for _, _, sql in migrations.MIGRATIONS if "CREATE MACRO rsr_solved" in sql]
    assert len(created) == 1
    assert f"CREATE MACRO rsr_solved(reward, tampered) AS {SOLVED_SQL};" in created[0]
