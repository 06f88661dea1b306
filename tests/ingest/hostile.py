"""Helpers for the hostile-corpus tests: small valid documents and `rsr ingest` run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def atif(session: str, task: str = "t", reward: object = None) -> dict:
    """A minimal valid ATIF trajectory."""
    rsr: dict = {"task_id": task}
    if reward is not None:
        rsr["reward"] = reward
    return {
        "schema_version": "ATIF-v1.4",
        "session_id": session,
        "agent": {"name": "terminus-2", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": f"do {session}"},
            {"step_id": 2, "source": "agent", "message": "Analysis: a\nPlan: p"},
        ],
        "extra": {"rsr": rsr},
    }


def write_json(path: Path, doc: object) -> Path:
    """Write `doc` as JSON (Python's json writes NaN and Infinity literals, as some tools do)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def harbor_task(directory: Path, name: str = "t1", test_sh: bool = True) -> Path:
    """A small valid harbor task directory."""
    (directory / "environment").mkdir(parents=True)
    (directory / "task.toml").write_text(f'[task]\nname = "{name}"\n')
    (directory / "instruction.md").write_text("Write a,1 into /app/out.txt.\n")
    (directory / "environment" / "Dockerfile").write_text("FROM rsr-base:bookworm\nCOPY . /ctx/\n")
    (directory / "environment" / "data.csv").write_text("name,value\na,1\n")
    (directory / "tests").mkdir()
    if test_sh:
        (directory / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    (directory / "tests" / "test_outputs.py").write_text("def test_x():\n    assert True\n")
    (directory / "solution").mkdir()
    (directory / "solution" / "solve.sh").write_text("#!/bin/bash\necho a,1 > /app/out.txt\n")
    return directory


def rsr(*args: str, timeout: float = 120) -> tuple[int, dict | None, str]:
    """Run `rsr ARGS --json` as a real process: (exit status, parsed stdout or None, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    try:
        out = json.loads(done.stdout)
    except ValueError:
        out = None
    return done.returncode, out, done.stderr


def errors_by_name(errors: list) -> dict[str, str]:
    """Errors of a report keyed by the last part of their path."""
    out = {}
    for err in errors:
        path, error = (err["path"], err["error"]) if isinstance(err, dict) else (err.path, err.error)
        out[Path(path).name] = error
    return out


def bulk_atif_corpus(directory: Path, trajectories: int, steps: int) -> Path:
    """`trajectories` ATIF files of `steps` steps each (a few hundred bytes an answer) in `directory`, for
    commands that must take a while: one user step, then agent steps with a command each."""
    directory.mkdir(parents=True, exist_ok=True)
    for k in range(trajectories):
        doc_steps = [{"step_id": 1, "source": "user", "message": f"task {k}"}]
        for i in range(2, steps + 1):
            said = {"analysis": "a" * 300, "plan": "p" * 300, "commands": [{"keystrokes": f"echo {k} {i}\n"}]}
            doc_steps.append({"step_id": i, "source": "agent", "message": json.dumps(said)})
        doc = {
            "schema_version": "ATIF-v1.4",
            "session_id": f"b{k}",
            "agent": {"name": "terminus-2", "version": "1"},
            "steps": doc_steps,
            "extra": {"rsr": {"task_id": f"t{k % 50}", "reward": 1.0}},
        }
        (directory / f"b{k:05d}.json").write_text(json.dumps(doc))
    return directory
