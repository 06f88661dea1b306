"""`rsr review approve|reject` as a reviewer uses it from a terminal: one rule with the studio
(`pipeline.refusal`), one line for a refusal, nothing recorded."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def demo(demo_db_template) -> Path:
    return demo_db_template


def rsr(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", *args, "--db", str(db)], capture_output=True, text=True
    )


def _rounds(db: Path, status: str) -> list[str]:
    done = rsr(db, "runbooks", "list", "--status", status, "--json")
    return [r["runbook_id"] for r in json.loads(done.stdout)]


def _reviews(db: Path, runbook_id: str) -> int:
    return len(json.loads(rsr(db, "runbooks", "show", runbook_id, "--json").stdout)["reviews"])


def test_a_critic_rejected_round_is_not_approved_and_the_reason_is_one_line(demo, tmp_path):
    db = tmp_path / "db.duckdb"
    shutil.copy(demo, db)
    rejected = _rounds(db, "critic_rejected")[0]
    done = rsr(db, "review", "approve", rejected, "--by", "ana")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "rejected by the critic" in done.stderr
    assert "jobs resume" not in done.stderr and "Traceback" not in done.stderr
    assert _reviews(db, rejected) == 0


@pytest.mark.parametrize("name", ["", "   ", "\u200b", "\t\u202e"])
def test_a_reviewer_needs_a_visible_character(demo, tmp_path, name):
    db = tmp_path / "db.duckdb"
    shutil.copy(demo, db)
    pending = _rounds(db, "pending_review")[0]
    done = rsr(db, "review", "reject", pending, "--by", name)
    assert done.returncode == 2 and "reviewer name is required" in done.stderr
    assert _reviews(db, pending) == 0


def test_decisions_are_recorded_and_said_in_words(demo, tmp_path):
    db = tmp_path / "db.duckdb"
    shutil.copy(demo, db)
    (pending,) = _rounds(db, "pending_review")
    done = rsr(db, "review", "reject", pending, "--by", "ana", "--reason", "leaks")
    assert done.returncode == 0 and done.stdout.strip() == f"{pending}: rejected by ana"
    assert pending in _rounds(db, "human_rejected")
    done = rsr(db, "review", "approve", pending, "--by", "bo")  # the latest review decides
    assert done.returncode == 0 and done.stdout.startswith(
        f"{pending}: approved by bo; run `rsr jobs resume "
    )
    assert pending in _rounds(db, "approved") and _reviews(db, pending) == 2
