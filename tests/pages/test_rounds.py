"""A runbook's critic rounds as the rounds component draws them: the runbook text cut at the flags' spans (which
come from the critic's output, so they may overlap, run past the text or be negative), and each flag's lines."""

from __future__ import annotations

import json
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from rsr_core.models import CriticFlag, Runbook
from rsr_core.ui.runbook_views import flagged_segments, round_card
from tests.pages.conftest import page


def _flag(start: int | None, end: int | None, **extra) -> CriticFlag:
    return CriticFlag(runbook_id="rb", stage="deterministic", kind="verifier_leak", score=0.9,
                      span_start=start, span_end=end, evidence="x", **extra)  # fmt: skip


def test_flagged_spans_are_marked_and_overlapping_ones_merged():
    text = "0123456789abcdef"
    flags = [_flag(2, 5), _flag(4, 8), _flag(12, 14), _flag(None, None)]
    assert flagged_segments(text, flags) == [
        ("01", False), ("234567", True), ("89ab", False), ("cd", True), ("ef", False),
    ]  # fmt: skip


@given(
    st.text(max_size=60),
    st.lists(st.tuples(st.integers(-20, 90), st.integers(-20, 90)), max_size=6),
)
def test_the_pieces_are_the_text_whatever_the_spans(text, spans):
    pieces = flagged_segments(text, [_flag(a, b) for a, b in spans])
    assert "".join(p for p, _ in pieces) == text
    assert all(p for p, _ in pieces)  # no empty piece
    assert all(a != b for (_, a), (_, b) in pairwise(pieces))  # marks alternate


def test_a_round_card_says_what_each_flag_matched_and_why():
    rb = Runbook(runbook_id="rb", lineage_id="lin", source_trajectory_id="s", task_id="t", job_id="j",
                 variant=0, target_end_state="out.txt holds a,1", key_milestones=["write it"],
                 useful_checks=[], recovery_strategies=[], pitfalls=[], prompt_version="planner_v1",
                 model="m", critic_verdict="reject")  # fmt: skip
    at = rb.text().index("a,1")
    card = round_card(rb, [_flag(at, at + 3, matched_text="a,1", matched_path="tests/test_outputs.py",
                                 reason="the expected output")])  # fmt: skip
    assert card["title"].startswith("round 1 · critic verdict reject · 1 flag(s)")
    assert [p for p, marked in card["segments"] if marked] == ["a,1"]
    (flag,) = card["flags"]
    assert flag == {
        "head": f"verifier_leak · deterministic stage · score 0.90 · characters {at}–{at + 3}",
        "evidence": "x",
        "matched": "matches tests/test_outputs.py: a,1",
        "reason": "the expected output",
    }


def test_the_runbooks_page_draws_every_round_of_the_lineage_in_one_element(demo_db):
    at = page("runbooks")
    rounds = [
        json.loads(element.proto.json)["rounds"]
        for element in at.get("bidi_component")
        if element.proto.component_name == "rsr_core.rounds"
    ]
    assert len(rounds) == 1 and rounds[0], "one rounds component with the shown lineage's rounds"
    assert all(r["title"].startswith(f"round {n} · critic verdict") for n, r in enumerate(rounds[0], 1))
