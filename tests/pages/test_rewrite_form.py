"""The Rewrite page's form comes back as it was left, per database: every field, where units run included."""

from __future__ import annotations

from rsr_core.store import Store
from rsr_core.store.preferences import set_preferences
from tests.pages.conftest import page


def test_the_form_comes_back_from_the_database(demo_db):
    store = Store(demo_db)
    with store.transaction() as cur:
        set_preferences(
            cur,
            {
                "rewrite.backend": "ray",
                "rewrite.ray_address": "127.0.0.1:6380",
                "rewrite.k": 2,
                "rewrite.gate": "human",
            },
        )
    store.close()
    at = page("rewrite")
    assert not at.exception
    assert at.radio(key="backend").value == "ray"
    assert at.text_input(key="ray_address").value == "127.0.0.1:6380"
    assert (at.number_input(key="k").value, at.radio(key="gate").value) == (2, "human")
