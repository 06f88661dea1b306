"""The deterministic critic on hand-written runbooks against real task files."""

from __future__ import annotations

import pytest

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.models import Command, Runbook, Step, Trajectory
from rsr_core.rewrite.critic import CriticSettings, critique_text, deterministic_flags
from tests.conftest import DEMO_TASKS


def _rb(
    target: str, milestones=("Inspect the input file first.",), pitfalls=("Off-by-one errors.",)
) -> Runbook:
    return Runbook(
        runbook_id="rb",
        lineage_id="rb",
        source_trajectory_id="s",
        task_id="t",
        target_end_state=target,
        key_milestones=list(milestones),
        useful_checks=["Look at the file you wrote."],
        recovery_strategies=["Start the step again."],
        pitfalls=list(pitfalls),
        prompt_version="planner_v1",
    )


@pytest.fixture(scope="module")
def log_task():
    return read_harbor_task(DEMO_TASKS / "log-summary")


@pytest.fixture(scope="module")
def sqlite_task():
    return read_harbor_task(DEMO_TASKS / "sqlite-extract")


def test_clean_runbook_has_no_flags(log_task):
    rb = _rb(
        "A CSV file with one row per status code and its number of requests, sorted by status.",
        ["Find which field of a log line holds the status code.", "Count requests per code."],
    )
    assert deterministic_flags(rb, log_task, None) == []


def test_verifier_values_and_test_paths_are_flagged_with_spans(log_task):
    rb = _rb("The CSV lists status 200 with 19 requests; test_outputs.py checks this.")
    flags = deterministic_flags(rb, log_task, None)
    text = rb.text()
    kinds = {(f.kind, f.matched_text) for f in flags}
    assert ("verifier_leak", "19") in kinds and ("verifier_leak", "test_outputs.py") in kinds
    for f in flags:
        assert text[f.span_start : f.span_end] == f.evidence
        assert (
            f.matched_path == "tests/test_outputs.py" and f.stage == "deterministic" and f.severity == "high"
        )


def test_public_values_are_not_leaks(log_task):
    # status,count and access.log are in the instruction: naming them gives nothing away
    rb = _rb("status_counts.csv starts with the header status,count and is built from /app/access.log.")
    assert deterministic_flags(rb, log_task, None) == []


def test_solution_lines_are_fuzzy_matched(sqlite_task):
    rb = _rb(
        "Run: rows = sqlite3.connect('/app/shop.db').execute('SELECT name FROM products WHERE price > 20 "
        "ORDER BY name')"
    )
    flags = deterministic_flags(rb, sqlite_task, None)
    assert any(
        f.kind == "solution_leak" and f.matched_path == "solution/solve.sh" and f.score >= 0.88 for f in flags
    )


def test_expected_answer_list_is_flagged(sqlite_task):
    rb = _rb("expensive.txt lists backpack, chair, desk, kettle and lamp.")
    flags = deterministic_flags(rb, sqlite_task, None)
    assert {f.matched_text for f in flags} >= {"backpack", "kettle"}


def test_harness_syntax(log_task):
    rb = _rb(
        "The CSV file exists.",
        ["In the explore phase look around, then transition to implement."],
        ["If the verifier feedback says not passed, reflect and retry."],
    )
    reasons = {f.reason for f in deterministic_flags(rb, log_task, None) if f.kind == "harness_syntax"}
    assert {
        "StateM phase transition",
        "StateM phase name",
        "RSRT verifier feedback wording",
        "RSRT verifier in the loop",
    } <= reasons


def test_source_run_final_contents_are_solution_leaks(log_task):
    source = Trajectory(
        trajectory_id="s",
        task_id="log-summary",
        steps=[
            Step(
                index=1,
                source="agent",
                commands=[
                    Command(keystrokes="cat > /app/helper.txt <<'EOF'\nthe quick magenta wombat\nEOF\n")
                ],
            )
        ],
    )
    rb = _rb("Write the quick magenta wombat into a helper file.")
    flags = deterministic_flags(rb, log_task, source)
    assert any(f.kind == "solution_leak" and f.matched_path == "source run" for f in flags)


def test_schema_flags(log_task):
    rb = _rb("   ")
    assert any(f.kind == "schema" for f in deterministic_flags(rb, log_task, None))


def test_a_lower_fuzzy_threshold_flags_a_near_match_a_higher_one_does_not(sqlite_task):
    # The solution's query with two words changed: close to it, not equal.
    rb = _rb(
        "Use connect('/app/shop.db') then execute('SELECT name FROM products WHERE cost > 20 ORDER BY title')"
    )
    strict = deterministic_flags(rb, sqlite_task, None, CriticSettings(fuzzy_threshold=90))
    loose = deterministic_flags(rb, sqlite_task, None, CriticSettings(fuzzy_threshold=85))
    assert [f for f in strict if f.kind == "solution_leak"] == []
    near = [f for f in loose if f.kind == "solution_leak"]
    assert near and all(0.85 <= f.score < 0.90 for f in near)
    assert near[0].matched_path == "solution/solve.sh" and "SELECT name FROM products" in near[0].matched_text


def test_critique_never_repeats_hidden_text(log_task):
    rb = _rb("The CSV lists status 200 with 19 requests; test_outputs.py checks this.")
    text = critique_text(deterministic_flags(rb, log_task, None))
    assert "tests/test_outputs.py" not in text and "grader" in text
