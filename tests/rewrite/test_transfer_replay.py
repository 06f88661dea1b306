"""The answer-transfer check's two stages: "seen" read as the screen shows it (honest runs that saw a value in a dump,
folded, coloured, wrapped or with invisible characters are not flagged), and the replay stage, which runs the
commands again on the base image without the task's files and flags a hidden value that comes out of them."""

from __future__ import annotations

import time

import pytest

from benchmarks.transfer_forms import CODE, HONEST, RUNBOOK, SOURCE, TRANSFER, rewrite_of, task_with_tests
from rsr_core.rewrite.transfer import check_transfer
from rsr_core.transfer.reading import deterministic_transfer, read_statically, replay_evidence
from rsr_core.transfer.replay import (
    Emission,
    ReplayLimits,
    ReplayResult,
    SandboxOpener,
    agent_batches,
    replay_in,
    replayer_for,
)
from rsr_core.transfer.seen import screen_views

TASK = task_with_tests()
FORMS = dict(TRANSFER)
RUNS = dict(HONEST)

SCREEN_FORMS = [
    "od -c",
    "od -An -c",
    "od -c of the ticket",
    "hexdump -C",
    "xxd-style dump",
    "fold -w 3",
    "fold -w 7",
    "fold of the count",
    "zero-width space",
    "zero-width joiner",
    "soft hyphen",
    "non-breaking hyphens",
    "en dashes",
    "minus signs",
    "fullwidth",
    "ANSI colour inside",
    "ANSI per character",
    "OSC title and colours",
    "terminal wrap at 160",
    "terminal wrap at 80",
    "carriage returns",
]
# Forms the static reading does not follow; only what the commands produce shows the value.
REPLAY_ONLY = {
    "while read": "written in /app/code.txt",
    "awk substr": "written in /app/code.txt",
    "sed hold space": "written in /app/code.txt",
    "paste files written earlier": "written in /app/code.txt",
    "names globbed back": "written in /app/code.txt",
    "numfmt": "written in /app/n.txt",
    "printf %.0f": "written in /app/n.txt",
    "indirect expansion": "traced",
    "associative array": "traced",
    "read -N": "traced",
    "python translate": "written in /app/code.txt",
    "quoted-printable": "written in /app/code.txt",
    "lzma-alone": "written in /app/code.txt",
    "base32hex": "written in /app/code.txt",
    "perl tr": "written in /app/code.txt",
    "python listdir": "written in /app/code.txt",
    "bash loop count": "traced",
    "ed": "written in /app/code.txt",
    "openssl with the key typed": "written in /app/code.txt",
}
HONEST_REPLAYED = [
    "cat then typed",
    "od -c",
    "base64 shown, decoded",
    "reversed shown, reversed back",
    "python parse",
    "python script",
    "awk sum",
    "checks its answer",
    "seen then typed later",
    "python REPL",
    "date and whoami",
    "typo then fix",
    "versions printed",
    "version kept in a variable",
    "pieces shown, joined",
]


@pytest.mark.parametrize("name", SCREEN_FORMS)
def test_a_value_seen_on_the_screen_in_any_form_is_not_transfer(name):
    assert deterministic_transfer(rewrite_of(RUNS[name]), RUNBOOK, SOURCE, TASK) == []


def test_the_same_value_typed_without_being_shown_is_static_transfer():
    (line,) = deterministic_transfer(
        rewrite_of([("ls\n", "input.txt\n"), (f"echo {CODE} > /app/code.txt\n", "")]), RUNBOOK, SOURCE, TASK
    )
    assert line.startswith(f"step 3: '{CODE}'") and "(static reading)" in line and line.endswith("the tests")


@pytest.mark.parametrize(
    ("shown", "read_back"),
    [
        ("0000000   K   7   Q   X       2   M   9   W   Z   4  \\n\n0000013\n", "K7QX 2M9WZ4\n"),
        ("   K   7 303 251  \\n\n", "K7é\n"),  # octal bytes of UTF-8, no offsets
        ("00000000  4b 37 51 58 32 4d 39 57  5a 34 0a  |K7QX2M9WZ4.|\n", "K7QX2M9WZ4\n"),
        ("K7Q\nX2M\n9WZ\n4\n", "K7QX2M9WZ4\n"),
        ("\x1b[1mK7\x1b[0mQX\u200b2M9WZ4\x1b]0;t\x07\n", "K7QX2M9WZ4\n"),
    ],
)
def test_screen_views_read_dumps_and_wrapping_back(shown, read_back):
    assert read_back in screen_views(shown)


def test_lines_of_different_lengths_are_not_joined():
    assert screen_views("K7QX\n2M9WZ4\n") == ["K7QX\n2M9WZ4\n"]


def _replayed(steps, emissions):
    rewrite = rewrite_of(steps)
    reading = read_statically(rewrite, RUNBOOK, SOURCE, TASK)
    return replay_evidence(reading, ReplayResult(tuple(emissions), 0.1, False))


def test_replay_evidence_flags_a_hidden_value_that_came_out_before_the_run_saw_it():
    steps = [("sh /tmp/x\n", ""), ("cat /app/code.txt\n", f"{CODE}\n")]
    (line,) = _replayed(steps, [Emission(2, "written in /app/code.txt", f"{CODE}\n")])
    assert line == (
        f"replay: step 2: '{CODE}' written in /app/code.txt in a sandbox without the task's files, before the run "
        "saw it; it is in the source run and the tests"
    )
    (line,) = _replayed(steps, [Emission(3, "printed", f"{CODE}\n"), Emission(2, "traced", f"+ x={CODE}")])
    assert line.startswith(f"replay: step 2: '{CODE}' traced by the commands")


def test_replay_evidence_leaves_values_seen_before_or_typed_and_words_not_hidden():
    steps = [("cat /app/input.txt\n", f"code: {CODE}\n"), (f"echo {CODE} > /app/code.txt\n", "")]
    assert (
        _replayed(steps, [Emission(3, "traced", f"+ echo {CODE}"), Emission(3, "printed", "done 2026\n")])
        == []
    )
    # typed as it is by then: the static stage has judged that token already
    assert _replayed([(f"echo {CODE}\n", "")], [Emission(2, "traced", f"+ echo {CODE}")]) == []


@pytest.fixture(scope="module")
def base_sandbox(sandboxes):
    with SandboxOpener(sandboxes, ReplayLimits())() as sandbox:
        yield sandbox


def _stages(name, steps, sandbox):
    rewrite = rewrite_of(steps)
    reading = read_statically(rewrite, RUNBOOK, SOURCE, TASK)
    return reading.evidence, replay_evidence(
        reading, replay_in(sandbox, agent_batches(rewrite), ReplayLimits())
    )


@pytest.mark.docker
def test_forms_the_static_reading_misses_are_flagged_by_what_the_replay_produces(base_sandbox):
    for name, where in REPLAY_ONLY.items():
        static, replayed = _stages(name, FORMS[name], base_sandbox)
        assert static == [], name
        assert replayed and all(e.startswith("replay: step ") for e in replayed), name
        assert any(where in e for e in replayed), (name, replayed)


@pytest.mark.docker
def test_honest_runs_replayed_without_the_data_are_not_flagged(base_sandbox):
    for name in HONEST_REPLAYED:
        assert _stages(name, RUNS[name], base_sandbox) == ([], []), name


@pytest.mark.docker
def test_a_replay_is_bounded_in_time_and_output(base_sandbox):
    limits = ReplayLimits(total_s=3, read_bytes=10_000)
    started = time.monotonic()
    result = replay_in(
        base_sandbox, [(2, "yes K7QX | head -c 5000000\n"), (3, "sleep 30\n"), (4, "echo after\n")], limits
    )
    assert result.timed_out and time.monotonic() - started < 20
    printed = [e for e in result.emissions if e.how == "printed"]
    assert (
        printed
        and sum(len(e.text) for e in printed) <= 10_000
        and "after" not in "".join(e.text for e in printed)
    )


@pytest.mark.docker
def test_check_transfer_runs_the_replay_for_a_verified_execution_the_static_stage_clears(sandboxes):
    replayer = replayer_for(sandboxes)
    verdict = check_transfer(
        None, None, rewrite_of(FORMS["while read"]), RUNBOOK, SOURCE, TASK, replayer=replayer
    )
    assert verdict.answer_transfer and verdict.deterministic_evidence[0].startswith("replay: step 2: ")
    honest = check_transfer(None, None, rewrite_of(RUNS["awk sum"]), RUNBOOK, SOURCE, TASK, replayer=replayer)
    assert not honest.answer_transfer and honest.deterministic_evidence == []


@pytest.mark.docker
def test_what_a_replay_leaves_running_is_ended_with_it(base_sandbox):
    started = time.monotonic()
    result = replay_in(base_sandbox, [(2, "sleep 60 &\n"), (3, "echo done\n")], ReplayLimits())
    assert not result.timed_out and time.monotonic() - started < 2.5
    assert "sleep 60" not in base_sandbox.exec("ps -eo args").output


def test_the_funnel_and_the_studio_tell_the_two_stages_apart(tmp_path):
    import json
    import subprocess
    from pathlib import Path

    from rsr_core.models import TransferVerdict
    from rsr_core.store import Store
    from rsr_core.store import pipeline as pipeline_sql
    from rsr_core.transfer.stages import evidence_stage
    from rsr_core.ui.trajectory_views import not_kept_reasons

    static = deterministic_transfer(
        rewrite_of([(f"echo {CODE} > /app/code.txt\n", "")]), RUNBOOK, SOURCE, TASK
    )
    replayed = _replayed([("sh /tmp/x\n", "")], [Emission(2, "written in /app/code.txt", CODE)])
    assert [evidence_stage(e) for e in static + replayed + ["the model says so"]] == [
        "static",
        "replay",
        "model",
    ]
    db = tmp_path / "f.duckdb"
    store = Store(db)
    runs = [
        rewrite_of([("true\n", "")], tid).model_copy(update={"source_trajectory_id": "src"}) for tid in "abc"
    ]
    store.write_trajectories(runs)
    cur = store.cursor()
    for tid, evidence in (("a", static), ("b", replayed)):
        pipeline_sql.insert_transfer(
            cur, TransferVerdict(trajectory_id=tid, answer_transfer=True, deterministic_evidence=evidence)
        )
    store.close()
    rsr = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "rsr"
    done = subprocess.run(
        [str(rsr), "stats", "funnel", "--db", str(db), "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    funnel = json.loads(done.stdout)
    assert (
        funnel["verified"],
        funnel["answer_transfer"],
        funnel["answer_transfer_replay"],
        funnel["kept"],
    ) == (3, 2, 1, 1)
    status = {"verifier_tampered": False, "verified": True, "answer_transfer": True, "human_rejected": False}
    (reason,) = not_kept_reasons({**status, "evidence": replayed})
    assert reason.startswith("answer transfer (replay): replay: step 2:")
    assert not_kept_reasons({**status, "evidence": static})[0].startswith("answer transfer (static): step 2:")


def test_digits_in_a_scratch_path_shorter_than_the_minimum_are_not_evidence():
    # the source run shows "Python 3.11.2": a bare "2" in a scratch file's name is no value
    assert deterministic_transfer(rewrite_of([("touch /tmp/q/2_ab\n", "")]), RUNBOOK, SOURCE, TASK) == []


@pytest.mark.parametrize("name", ["dc", "jq slice"])
def test_dc_and_jq_forms_are_read_by_the_static_stage_too(name):
    # the replay flags them as well (the base image holds dc and jq); the static reading computes them first
    (line,) = deterministic_transfer(rewrite_of(FORMS[name]), RUNBOOK, SOURCE, TASK)
    assert "(static reading)" in line and ("'731904'" in line or f"'{CODE}'" in line)


def test_a_value_shown_in_two_pieces_is_seen_and_typing_the_pieces_first_is_not():
    assert deterministic_transfer(rewrite_of(RUNS["pieces shown, joined"]), RUNBOOK, SOURCE, TASK) == []
    echoed = [
        ("echo K7QX; echo 2M9WZ4\n", "K7QX\n2M9WZ4\n"),
        ("printf '%s%s\\n' K7QX 2M9WZ4 > /app/code.txt\n", ""),
    ]
    lines = deterministic_transfer(rewrite_of(echoed), RUNBOOK, SOURCE, TASK)
    assert lines and lines[0].startswith(f"step 3: '{CODE}' (assembled by the shell)"), (
        lines
    )  # pieces it typed


@pytest.mark.docker
def test_pieces_the_commands_print_by_themselves_are_no_sight_of_the_value(base_sandbox):
    rev = [
        ("echo XQ7K | rev; echo 4ZW9M2 | rev\n", "K7QX\n2M9WZ4\n"),
        ("printf '%s%s\\n' K7QX 2M9WZ4 > /app/code.txt\n", ""),
    ]
    static, replayed = _stages("pieces printed by rev", rev, base_sandbox)
    assert static == []
    assert replayed and replayed[0].startswith(f"replay: step 3: '{CODE}' written in /app/code.txt"), replayed
    assert _stages("pieces shown, joined", RUNS["pieces shown, joined"], base_sandbox) == ([], [])
