"""The export's left-out reasons tell the answer-transfer check's stages apart: a rewrite the replay stage flagged
is `answer_transfer_replay`, one the static reading or the model check flagged `answer_transfer`, each counted
once, and they agree with the rewrite funnel."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rsr_core.export import preview
from rsr_core.models import TransferVerdict
from rsr_core.store import Store
from rsr_core.store.pipeline import funnel, insert_transfer
from rsr_core.transfer.stages import REPLAY_MARK, STATIC_MARK
from tests.export.corpus import add_rewrite, add_task

VERDICTS = {
    "rw-static": TransferVerdict(
        trajectory_id="rw-static",
        answer_transfer=True,
        deterministic_evidence=[f"step 3: '4217' typed before it was seen {STATIC_MARK}"],
    ),
    "rw-replay": TransferVerdict(
        trajectory_id="rw-replay",
        answer_transfer=True,
        deterministic_evidence=[f"{REPLAY_MARK}step 3: '4217' printed in a sandbox without the task's files"],
    ),
    "rw-model": TransferVerdict(
        trajectory_id="rw-model", answer_transfer=True, llm_verdict=True, llm_evidence=["copied the total"]
    ),
    # Evidence of the replay stage on a run judged clean in the end does not leave it out.
    "rw-cleared": TransferVerdict(
        trajectory_id="rw-cleared",
        answer_transfer=False,
        deterministic_evidence=[f"{REPLAY_MARK}step 2: 'x' printed"],
    ),
    "rw-clean": TransferVerdict(trajectory_id="rw-clean", answer_transfer=False),
}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "rsr.duckdb"
    store = Store(str(path))
    add_task(store, "sales-report", "data-processing")
    for tid, verdict in VERDICTS.items():
        add_rewrite(store, tid, 1.0, None, [], variant=tid)
        with store.transaction() as cur:
            insert_transfer(cur, verdict)
    # A replayed value in a run that failed its verifier is counted as not verified, not twice.
    add_rewrite(store, "rw-failed", 0.0, None, [], variant="failed")
    with store.transaction() as cur:
        insert_transfer(cur, VERDICTS["rw-replay"].model_copy(update={"trajectory_id": "rw-failed"}))
    store.close()
    return path


def test_each_stage_has_its_reason_and_each_rewrite_counts_once(db):
    store = Store(str(db))
    try:
        left = preview(store).left_out
        with store.reading() as cur:
            stages = funnel(cur)
    finally:
        store.close()
    assert left.answer_transfer == 2  # the static reading and the model check
    assert left.answer_transfer_replay == 1
    assert left.not_verified == 1
    assert left.total == 4
    assert stages["answer_transfer"] == left.answer_transfer + left.answer_transfer_replay
    assert stages["answer_transfer_replay"] == left.answer_transfer_replay


def test_the_cli_summary_json_and_card_name_the_replay_stage(db, tmp_path):
    out = tmp_path / "rows.jsonl"
    rsr = [sys.executable, "-m", "rsr_core.cli"]
    base = [*rsr, "export", "--format", "sft-jsonl", "--out", str(out), "--db", str(db)]
    done = subprocess.run([*base, "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["left_out"]["answer_transfer_replay"] == 1
    assert summary["left_out"]["answer_transfer"] == 2
    exported = {json.loads(line)["trajectory_id"] for line in out.read_text().splitlines()}
    assert exported == {"rw-cleared", "rw-clean"}
    card = (tmp_path / "rows.card.md").read_text()
    assert "| answer transfer found by replaying the commands | 1 |" in card
    assert "| answer transfer found by reading the commands (or by the model check) | 2 |" in card
    done = subprocess.run([*base, "--force"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "answer transfer 2, answer transfer (replay) 1" in done.stdout
