"""The critic's harness vocabulary: every phrasing of StateM, RSRT and harness-only tools is flagged with its
span in the rendered runbook; ordinary English about planning, implementing and verifying is not."""

from __future__ import annotations

import pytest

from rsr_core import prompts
from rsr_core.models import Runbook
from rsr_core.rewrite.critic import HARNESS_VOCABULARY, harness_flags


def _rb(text: str) -> Runbook:
    return Runbook(
        runbook_id="rb",
        lineage_id="rb",
        source_trajectory_id="s",
        task_id="t",
        target_end_state="The CSV file exists.",
        key_milestones=["Inspect the input file first.", text],
        useful_checks=["Look at the file you wrote."],
        recovery_strategies=["Start the step again."],
        pitfalls=["Off-by-one errors."],
        prompt_version="planner_v1",
    )


# (phrasing, the evidence the flag must carry, the reason it must give)
HARNESS = [
    ("Then transition to phase verify.", "transition to phase verify", "StateM phase transition"),
    ("Move to the verify phase once the file exists.", "verify phase", "StateM phase name"),
    ("Switch into implement.", "Switch into implement", "StateM phase transition"),
    ("Enter verification phase and check the output.", "Enter verification phase", "StateM phase transition"),
    ("phase: verify", "phase: verify", "StateM phase name"),
    ("Current phase is verify.", "phase is verify", "StateM phase name"),
    ("phase `implement`", "phase `implement", "StateM phase name"),
    ("In the explore phase, list files.", "explore phase", "StateM phase name"),
    ("During the planning phase write the steps.", "planning phase", "StateM phase name"),
    ("switching to the done phase", "done phase", "StateM phase name"),
    ("explore -> plan -> implement", "explore -> plan", "StateM phase name"),
    (
        "Transition back to implement if a check fails.",
        "Transition back to implement",
        "StateM phase transition",
    ),
    ("Go back to implement when the count is wrong.", "Go back to implement", "StateM phase transition"),
    (
        "It transitioned into verification, then stopped.",
        "transitioned into verification",
        "StateM phase transition",
    ),
    ("Advance to done.", "Advance to done", "StateM phase transition"),
    ("Proceed to verification.", "Proceed to verification", "StateM phase transition"),
    ("Enter verify once the file exists.", "Enter verify", "StateM phase transition"),
    ('Answer with "transition": "verify".', '"transition": "verify', "StateM phase transition"),
    ("transition=implement", "transition=implement", "StateM phase transition"),
    ("[statem] entered", "[statem]", "StateM bookkeeping marker"),
    ("[ STATEM ] bookkeeping", "[ STATEM ]", "StateM bookkeeping marker"),
    ("Keep the state file current.", "state file", "StateM state machinery"),
    ("The state record lets the run resume.", "state record", "StateM state machinery"),
    ("Use the state machine to track progress.", "state machine", "StateM state machinery"),
    ("Allowed transitions are listed when one is refused.", "Allowed transitions", "StateM state machinery"),
    ("If the transition is refused, pick another.", "transition is refused", "StateM state machinery"),
    ("Work phase-local: each phase starts fresh.", "phase-local", "StateM state machinery"),
    ("It answered not passed.", "not passed", "RSRT verifier feedback wording"),
    ("The result was NOT   passed.", "NOT   passed", "RSRT verifier feedback wording"),
    ("Reflect on why it failed and continue.", "Reflect on why it failed", "RSRT verifier feedback wording"),
    (
        "Reflect on what may still be wrong with your solution.",
        "Reflect on what may still be wrong",
        "RSRT verifier feedback wording",
    ),
    ("reflect and retry", "reflect and retry", "RSRT verifier feedback wording"),
    ("The verifier said the output was wrong.", "verifier said", "RSRT verifier in the loop"),
    ("If the verifier says no, try again.", "verifier says", "RSRT verifier in the loop"),
    ("Verifier feedback arrives after each attempt.", "Verifier feedback", "RSRT verifier in the loop"),
    ("Ask the verifier whether it passes.", "Ask the verifier", "RSRT verifier in the loop"),
    ("You have three claims left.", "three claims left", "RSRT completion-claim budget"),
    ("The claim budget is 3.", "claim budget", "RSRT completion-claim budget"),
    ("Each completion claim is checked.", "completion claim", "RSRT completion-claim budget"),
    ("Claim completion again after fixing it.", "Claim completion again", "RSRT completion-claim budget"),
    ("Call run_tests to check.", "run_tests", "a tool the general harness does not have"),
    ("Use submit_solution when done.", "submit_solution", "a tool the general harness does not have"),
    ("check_solution() shows failures", "check_solution", "a tool the general harness does not have"),
    ("verify_solution", "verify_solution", "a tool the general harness does not have"),
    ("Finish with mark_task_complete.", "mark_task_complete", "a tool the general harness does not have"),
    (
        "Run commands through the bash_command tool.",
        "bash_command",
        "a tool the general harness does not have",
    ),
]


@pytest.mark.parametrize(("phrase", "evidence", "reason"), HARNESS, ids=[h[0] for h in HARNESS])
def test_harness_vocabulary_is_flagged_with_its_span(phrase, evidence, reason):
    rb = _rb(phrase)
    text = rb.text()
    flags = harness_flags(rb, text)
    assert [(f.evidence, f.reason) for f in flags] == [(evidence, reason)]
    (flag,) = flags
    assert text[flag.span_start : flag.span_end] == evidence and text.index(phrase) <= flag.span_start
    assert flag.kind == "harness_syntax" and flag.stage == "deterministic" and flag.severity == "high"


ORDINARY = [
    "Plan the migration before touching files.",
    "Verify the output file has 5 lines.",
    "Implement the parser in parse.py.",
    "Explore the directory with ls first.",
    "When done, print the file.",
    "Once done, stop.",
    "The plan is to count lines per status.",
    "Make sure the plan covers every key.",
    "Go back to the plan if the counts differ.",
    "Move on to implement the parser.",
    "Proceed to verify that the file is sorted.",
    "Switch to implementing the writer only after the reader works.",
    "Return to planning the schema only if needed.",
    "Implement, then verify, then stop.",
    "Verification of the output: cat it.",
    "Verify your output against the sample.",
    "Do the exploration with find and ls.",
    "Move to the next step.",
    "Enter the directory /app.",
    "Check the state of the database.",
    "The program keeps its state in memory.",
    "Terraform keeps its state file in terraform.tfstate.",
    "The migration is done in two phases: copy, then delete.",
    "Phase out the old column.",
    "Reflect on the output format.",
    "If the check did not pass, fix the regex.",
    "Run the tests you wrote yourself.",
    "Mark the task complete only after checking the file.",
    "Claim your output path from the instruction.",
    "The run script is ./run_tests.sh in the repo.",
    "The test passed locally, so write the file.",
    "Use a two-phase plan: copy, then delete.",
]


@pytest.mark.parametrize("phrase", ORDINARY)
def test_ordinary_english_is_not_flagged(phrase):
    rb = _rb(phrase)
    assert harness_flags(rb, rb.text()) == []


def test_every_rule_of_the_vocabulary_file_is_exercised():
    data = prompts.load_json(HARNESS_VOCABULARY)
    assert HARNESS_VOCABULARY.endswith("_v1.json") and data["version"] == 1 and data["doc"]
    assert {rule["reason"] for rule in data["rules"]} == {reason for _, _, reason in HARNESS}


def test_several_phrases_in_one_runbook_give_one_flag_each():
    rb = _rb(
        "In the explore phase look around, then transition to implement. If not passed, reflect and retry."
    )
    text = rb.text()
    flags = harness_flags(rb, text)
    assert [f.evidence for f in flags] == [
        "explore phase",
        "transition to implement",
        "not passed",
        "reflect and retry",
    ]
    assert all(text[f.span_start : f.span_end] == f.evidence for f in flags)
