"""The `rsr` command: help everywhere, README coverage, JSON contracts, exit codes."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from rsr_core.cli import build_parser, main
from rsr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _walk(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    # argparse has no public way to list a parser's subcommands and their help.
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {a.dest: a.help for a in action._choices_actions}  # noqa: SLF001
            for name, sub in action.choices.items():
                yield (*prefix, name), helps.get(name), sub
                yield from _walk(sub, (*prefix, name))


def test_every_command_has_help_and_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    commands = list(_walk(build_parser()))
    assert len(commands) >= 5
    for path, help_text, sub in commands:
        assert help_text, f"rsr {' '.join(path)} has no help text"
        assert sub.description, f"rsr {' '.join(path)} has no description"
        assert f"rsr {' '.join(path)}" in readme, f"README does not mention `rsr {' '.join(path)}`"


def test_ingest_json_contract_and_exit_status(tmp_path, data_dir, capsys):
    db = str(tmp_path / "x.duckdb")
    assert main(["ingest", str(data_dir / "harbor_job"), "--db", db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"files": 4, "trajectories_added": 4, "duplicates": 0, "tasks_added": 2, "errors": []}
    (tmp_path / "bad.json").write_text("{")
    assert main(["ingest", str(tmp_path / "bad.json"), "--db", db, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["errors"][0]["path"].endswith("bad.json") and "invalid JSON" in out["errors"][0]["error"]


def test_stats_and_show_through_the_console_script(tmp_path, data_dir):
    db = str(tmp_path / "y.duckdb")
    rsr = [sys.executable, "-m", "rsr_core.cli"]
    subprocess.run([*rsr, "ingest", str(data_dir), "--db", db], check=True, capture_output=True)
    summary = json.loads(
        subprocess.run(
            [*rsr, "stats", "summary", "--db", db, "--json"], check=True, capture_output=True, text=True
        ).stdout
    )
    assert summary["trajectories"]["discovery"] == 16  # 11 written for the tests, 5 by Terminal-Bench itself
    shown = json.loads(
        subprocess.run(
            [*rsr, "show", "h-s1", "--db", db, "--json"], check=True, capture_output=True, text=True
        ).stdout
    )
    assert shown["task_id"] == "csv-report" and len(shown["steps"]) == 4
    listed = json.loads(
        subprocess.run(
            [*rsr, "list", "--harness", "rsrt", "--db", db, "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert listed["total"] == 1 and listed["rows"][0]["trajectory_id"] == "h-s3"
    missing = subprocess.run([*rsr, "show", "nope", "--db", db], capture_output=True, text=True)
    assert missing.returncode == 1 and "no trajectory" in missing.stderr


def _hold(db: Path, seconds: float) -> subprocess.Popen:
    """Another process that keeps the database open for `seconds` (as a long export or a stuck tool would)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from rsr_core.store import Store; s = Store({str(db)!r}); c = s.cursor(); import time; "
            f"print('ready', flush=True); time.sleep({seconds}); s.close(); print('released', flush=True); "
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "ready"
    return holder


def _ingest(db: Path, wait: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "rsr_core.cli",
            "ingest",
            str(ROOT / "tests" / "data" / "atif"),
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "RSR_DB_WAIT": wait},
        timeout=120,
    )


def test_nobody_holds_the_database_between_uses(tmp_path):
    db = tmp_path / "shared.duckdb"
    store = Store(db)  # a long-lived process, like the app: it does not keep the file open
    assert store.summary()["tasks"] == 0
    res = _ingest(db, "5")
    assert res.returncode == 0, res.stderr
    assert sum(store.summary()["trajectories"].values()) == 3  # the other process's writes are visible


def test_a_writer_waits_for_a_holder_with_a_bounded_reported_wait(tmp_path):
    db = tmp_path / "busy.duckdb"
    holder = _hold(db, 60)
    try:
        res = _ingest(db, "1")
        assert res.returncode == 2
        line = res.stderr.strip().splitlines()[-1]
        assert "is in use by PID" in line and str(holder.pid) in line and "waited 1 s" in line
        assert "waiting for" in res.stderr  # the wait was reported before it gave up
    finally:
        holder.kill()
        holder.wait()
    holder = _hold(db, 6)  # long enough that the writer, however slowly it starts, finds the file held
    try:
        res = _ingest(db, "60")
        assert res.returncode == 0, res.stderr
        assert "waiting for" in res.stderr and "3 trajectories added" in res.stdout
    finally:
        holder.kill()
        holder.wait()


def _run_with_tty_stderr(args: list[str]) -> tuple[int, str]:
    """Run `rsr …` with stderr on a pseudo-terminal (as in an interactive shell); returns (status, stderr)."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rsr_core.cli", *args], stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def test_ingest_and_export_show_progress_on_a_terminal_only(tmp_path):
    db = str(tmp_path / "p.duckdb")
    code, err = _run_with_tty_stderr(["ingest", str(ROOT / "tests" / "data" / "harbor_job"), "--db", db])
    assert code == 0 and "ingest" in err and "file" in err and "%" in err
    code, err = _run_with_tty_stderr(["export", "--format", "sft-jsonl", "--out", str(tmp_path / "o.jsonl"),
                                      "--db", db, "--json"])  # fmt: skip
    assert code == 0 and "%" not in err and "export:" not in err  # --json: quiet
    piped = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "ingest", str(ROOT / "tests" / "data" / "atif"), "--db", db],
        capture_output=True,
        text=True,
    )
    assert piped.returncode == 0 and "%" not in piped.stderr  # not a terminal: no bar
