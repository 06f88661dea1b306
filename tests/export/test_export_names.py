"""An ATIF export names its files from ids through one mapping (`atif_write.safe_name`): no id can reach the
card, leave the output directory, or take another id's file."""

from __future__ import annotations

import json
import subprocess
import sys

from rsr_core.formats.atif_write import safe_name
from tests.ingest.hostile import atif, write_json

TASKS = [
    "README.md",
    "readme.MD",
    "_no_task",
    "..",
    "../../escape",
    "a/b",
    "NUL",
    "x~y",
    ".hidden",
    "ok-task",
]
# An id spelled like another's altered name must not take its file.
TRAJECTORIES = ["a b", f"a_b~{safe_name('a b').split('~')[1]}", "a_b", "README.md", "~", "t"]


def test_every_trajectory_gets_its_own_file_inside_the_output_and_the_card_stays(tmp_path):
    corpus = tmp_path / "corpus"
    pairs = [(task, f"{n}-{tid}") for n, task in enumerate(TASKS) for tid in TRAJECTORIES[:1]]
    pairs += [("ok-task", tid) for tid in TRAJECTORIES]
    for n, (task, tid) in enumerate(pairs):
        write_json(corpus / f"f{n}.json", atif(tid, task=task, reward=1.0))
    db, out = tmp_path / "x.duckdb", tmp_path / "out"
    rsr = [sys.executable, "-m", "rsr_core.cli"]
    subprocess.run([*rsr, "ingest", str(corpus), "--db", str(db)], check=True, capture_output=True)
    done = subprocess.run(
        [*rsr, "export", "--format", "atif", "--all", "--out", str(out), "--db", str(db), "--json"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert all(p.resolve().is_relative_to(out.resolve()) for p in out.rglob("*"))
    assert (out / "README.md").is_file()
    written = [p for p in files if p.name != "README.md" or p.parent != out]
    ids = sorted(json.loads(p.read_text())["trajectory_id"] for p in written)
    assert ids == sorted(tid for _, tid in pairs)  # one file each, none lost to another's name
    assert not any(p.name.lower() == "readme.md" and p.parent == out and p.is_dir() for p in out.iterdir())


def test_kept_and_altered_names_never_meet():
    names = [safe_name(x) for x in {*TASKS, *TRAJECTORIES, "a" * 121, "a" * 120}]
    assert len(set(names)) == len(names)
    assert safe_name("ok-task") == "ok-task" and safe_name("README.md") != "README.md"
    assert all("/" not in n and n not in (".", "..") for n in names)
