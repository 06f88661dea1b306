"""Terminus 1 runs train in Terminus 1's own answer format (Terminal-Bench's CommandBatchResponse), not Terminus
2's: every assistant turn of their rows is checked against the schema their own prompt gives the model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from rsr_core.formats.terminus1 import is_terminus1_answer
from rsr_core.formats.training import training_row
from rsr_core.models import Command, Step, Trajectory

_SCRIPT = Path(sys.executable).with_name("rsr")
RSR = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "rsr_core.cli"]
TB1 = Path(__file__).parents[1] / "data" / "tb1_real" / "runs"
T1_TRIAL = TB1 / "terminus-1-run" / "write-greeting" / "write-greeting.1-of-1.terminus-1-run"


def _schema() -> dict:
    """The answer schema Terminal-Bench's Terminus 1 put in its first prompt (a real run's prompt.txt)."""
    prompt = (T1_TRIAL / "agent-logs" / "episode-0" / "prompt.txt").read_text()
    start = prompt.index("matches this schema:\n\n") + len("matches this schema:\n\n")
    return json.loads(prompt[start : prompt.index("\n\nDon't include markdown formatting.")])


def _rsr(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RSR, *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def _rows(tmp_path: Path, *sources: Path) -> list[dict]:
    db, out = tmp_path / "s.duckdb", tmp_path / "rows.jsonl"
    done = _rsr("ingest", *sources, "--db", db)
    assert done.returncode == 0, done.stderr
    done = _rsr("export", "--format", "sft-jsonl", "--all", "--out", out, "--db", db)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_every_terminus1_turn_is_valid_against_its_own_schema(tmp_path, data_dir):
    """The real Terminus 1 run keeps its answers as written; the TB1 fixture run whose model answered twice in
    Terminus 2's format (which Terminus 1 would refuse) has those turns written in Terminus 1's format."""
    schema = _schema()
    rows = _rows(tmp_path, TB1 / "terminus-1-run", data_dir / "tb1_runs", TB1 / "terminus-2-run")
    by_id = {r["trajectory_id"]: r["messages"] for r in rows}
    terminus1 = [
        by_id["write-greeting.1-of-1.terminus-1-run"],
        by_id["hello-world.1-of-1.2025-02-01__10-00-00"],
    ]
    answers = [m["content"] for messages in terminus1 for m in messages if m["role"] == "assistant"]
    assert len(answers) == 5
    for answer in answers:
        jsonschema.validate(json.loads(answer), schema)
        assert is_terminus1_answer(answer)
    recorded = [
        (p / "response.json").read_text() for p in sorted((T1_TRIAL / "agent-logs").glob("episode-*"))
    ]
    assert answers[:2] == recorded  # as written, byte for byte
    rebuilt = json.loads(answers[3])
    assert rebuilt == {
        "state_analysis": "check",
        "explanation": "cat it",
        "commands": [{"keystrokes": "cat hello.txt\n", "is_blocking": False, "timeout_sec": 0.1}],
        "is_task_complete": False,
    }
    assert json.loads(answers[4])["is_task_complete"] is True
    (t2,) = [m for tid, m in by_id.items() if "terminus-2" in tid]
    for m in t2:  # a Terminus 2 run of the same benchmark stays in Terminus 2's format
        if m["role"] == "assistant":
            assert not is_terminus1_answer(m["content"]) and '"task_complete"' in m["content"]


def test_a_terminus1_run_recorded_in_parts_is_rebuilt_in_its_format():
    """A Terminus 1 run whose answers were kept as parts (harbor's "Analysis: …\\nPlan: …") is written as
    CommandBatchResponse; a turn that is no Terminus answer at all stays verbatim."""
    steps = [
        Step(index=1, source="user", message="Do it."),
        Step(
            index=2,
            source="agent",
            message="Analysis: empty\nPlan: write",
            analysis="empty",
            plan="write",
            commands=[Command(keystrokes="echo hi > f\n", duration=2.0)],
            observation="$ ",
        ),
        Step(index=3, source="agent", message="I am done.", observation=None),
    ]
    traj = Trajectory(trajectory_id="t1", harness="terminus-1", steps=steps)
    messages, why = training_row(traj)
    assert why is None
    first = json.loads(messages[1]["content"])
    assert first == {
        "state_analysis": "empty",
        "explanation": "write",
        "commands": [{"keystrokes": "echo hi > f\n", "is_blocking": False, "timeout_sec": 2.0}],
        "is_task_complete": False,
    }
    jsonschema.validate(first, _schema())
    assert messages[-1]["content"] == "I am done."
    as_t2, _ = training_row(traj.model_copy(update={"harness": "terminus-2"}))
    assert json.loads(as_t2[1]["content"])["analysis"] == "empty"  # the same steps of a Terminus 2 run
