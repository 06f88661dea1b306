"""Output paths: nothing is clobbered, nothing is written beside the output but its card, writes are atomic."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsr_core.cli import main
from rsr_core.export import export
from rsr_core.outputs import AtomicFile, OutputError
from rsr_core.store import Store
from tests.export.corpus import add_rewrite
from tests.ingest.hostile import bulk_atif_corpus
from tests.signals import sigint_default

RSR = [sys.executable, "-m", "rsr_core.cli"]


@pytest.fixture
def db(tmp_path):
    store = Store(tmp_path / "db" / "x.duckdb")
    add_rewrite(store, "rw-a", 1.0, False, [], variant="a")
    store.close()
    return str(tmp_path / "db" / "x.duckdb")


def _export(db: str, out, *extra: str) -> int:
    return main(["export", "--format", "sft-jsonl", "--out", str(out), "--db", db, *extra])


def _listing(path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_existing_file_needs_force_and_is_replaced_atomically(db, tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    out.write_text("precious\n")
    assert _export(db, out) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"rsr: {out}: exists; pass --force to replace it"
    assert out.read_text() == "precious\n" and not (tmp_path / "o.card.md").exists()
    assert _export(db, out, "--force") == 0
    assert "rw-a" in out.read_text() and (tmp_path / "o.card.md").is_file()
    assert _listing(tmp_path) == ["db", "o.card.md", "o.jsonl"]


@pytest.mark.parametrize("kind", ["fifo", "socket", "symlink", "device", "directory"])
def test_special_paths_are_refused_even_with_force(db, tmp_path, capsys, kind):
    target = tmp_path / "t.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
    elif kind == "symlink":
        target.symlink_to("/etc/passwd")
    elif kind == "device":
        target = "/dev/full"
    else:
        target.mkdir()
    before = Path("/etc/passwd").read_text()
    assert _export(db, target, "--force") == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(target) in err and "Traceback" not in err
    assert Path("/etc/passwd").read_text() == before
    if kind == "device":
        assert os.path.exists("/dev/full") and not os.path.isfile("/dev/full")
        assert not os.path.exists("/dev/full.card.md") and not os.path.exists("/dev/README.md")
    else:
        assert _listing(tmp_path) == ["db", "t.jsonl"]


def test_system_directories_get_nothing_but_what_was_asked(db, tmp_path, capsys):
    assert _export(db, "/proc/rsr-export.jsonl") == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("rsr: /proc/rsr-export.jsonl:") and len(err.splitlines()) == 1
    assert not os.path.exists("/proc/rsr-export.jsonl")
    nested = tmp_path / "new" / "deeper" / "o.jsonl"
    assert _export(db, nested) == 0
    assert _listing(tmp_path / "new" / "deeper") == ["o.card.md", "o.jsonl"]


def test_atif_directory_replaced_only_when_it_is_an_earlier_atif_export(db, tmp_path, capsys):
    args = ["export", "--format", "atif", "--db", db, "--out"]
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("keep")
    assert main([*args, str(theirs), "--force"]) == 1
    assert "not an earlier output of this kind" in capsys.readouterr().err
    assert _listing(theirs) == ["notes.txt"]
    ours = tmp_path / "ours"
    assert main([*args, str(ours)]) == 0
    assert main([*args, str(ours)]) == 1
    assert main([*args, str(ours), "--force"]) == 0
    assert "README.md" in _listing(ours) and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_failed_export_leaves_the_old_output_and_no_temporary_file(db, tmp_path):
    out = tmp_path / "o.jsonl"
    out.write_text("old\n")

    def boom(done: int, total: int) -> None:
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        export(Store(db), "sft-jsonl", out, on_progress=boom, force=True)
    assert out.read_text() == "old\n"
    assert _listing(tmp_path) == ["db", "o.jsonl"]


def test_atomic_file_refuses_a_path_that_became_special_while_writing(tmp_path):
    out = tmp_path / "o.txt"
    f = AtomicFile(out)
    f.handle.write("x")
    out.symlink_to("/etc/hostname")
    with pytest.raises(OutputError, match="became a symbolic link"):
        f.commit()
    assert out.is_symlink() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("out", "fmt", "expected"),
    [
        ("-", "sft-jsonl", "rsr: -: writing to standard output is not supported; give a path to write to"),
        (
            "{tmp}/trail/",
            "sft-jsonl",
            "rsr: {tmp}/trail/: names a directory; this output is a file (give a file name)",
        ),
        (
            "{tmp}/trail/.",
            "parquet",
            "rsr: {tmp}/trail/.: names a directory; this output is a file (give a file name)",
        ),
        ("", "sharegpt", "rsr: an empty output path; give a path to write to"),
        ("-", "atif", "rsr: -: writing to standard output is not supported; give a path to write to"),
    ],
    ids=["dash", "trailing-slash", "dot", "empty", "dash-atif"],
)
def test_paths_that_cannot_name_the_output_are_refused(db, tmp_path, capsys, monkeypatch, out, fmt, expected):
    # Seen: `--out -` wrote a file called "-" in the working directory, `--out dir/` a file called "dir".
    monkeypatch.chdir(tmp_path)
    out = out.format(tmp=tmp_path)
    assert main(["export", "--format", fmt, "--out", out, "--db", db]) == 1
    assert capsys.readouterr().err.strip() == expected.format(tmp=tmp_path)
    assert _listing(tmp_path) == ["db"]


def test_discover_refuses_dash_as_its_output_before_running_anything(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = [
        "discover",
        "--task",
        "t",
        "--harness",
        "terminus-2",
        "--out",
        "-",
        "--db",
        str(tmp_path / "x.duckdb"),
    ]
    assert main(args) == 1
    assert capsys.readouterr().err.strip() == (
        "rsr: -: writing to standard output is not supported; give a path to write to"
    )
    assert _listing(tmp_path) == []


@pytest.fixture(scope="module")
def big_db(tmp_path_factory):
    """A database whose export takes seconds: 1,500 trajectories of 40 steps, stored by `rsr ingest`."""
    root = tmp_path_factory.mktemp("big")
    corpus = bulk_atif_corpus(root / "corpus", 1500, 40)
    db = root / "big.duckdb"
    done = subprocess.run([*RSR, "ingest", str(corpus), "--db", str(db)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return str(db)


def _export_process(db: str, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*RSR, "export", "--format", "sft-jsonl", "--out", str(out), "--db", db, *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )


def test_concurrent_exports_to_one_path_never_replace_each_other(big_db, tmp_path):
    # Seen: three exports started together without --force all succeeded, each replacing the one before.
    out = tmp_path / "o.jsonl"
    procs = [_export_process(big_db, out) for _ in range(3)]
    results = [(p.wait(120), p.stderr.read().splitlines()) for p in procs]  # type: ignore[union-attr]
    ok = [r for r in results if r[0] == 0]
    refused = [r for r in results if r[0] == 1]
    assert len(ok) == 1 and len(refused) == 2, results
    for _, err in refused:
        line = [e for e in err if "waiting for" not in e]
        assert line in (
            [f"rsr: {out}: exists; pass --force to replace it"],
            [f"rsr: {out}: appeared while writing; pass --force to replace it"],
        ), err
    assert len(out.read_text().splitlines()) == 1500
    assert _listing(tmp_path) == ["o.card.md", "o.jsonl"]


def test_concurrent_atif_exports_to_one_directory_never_replace_each_other(big_db, tmp_path):
    out = tmp_path / "atif"
    args = ["export", "--format", "atif", "--all", "--out", str(out), "--db", big_db]
    procs = [
        subprocess.Popen([*RSR, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)
    ]
    codes = sorted(p.wait(120) for p in procs)
    assert codes == [0, 1]
    assert len(list(out.rglob("*.atif.json"))) == 1500 and (out / "README.md").is_file()
    assert _listing(tmp_path) == ["atif"]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_mid_export_leaves_the_old_output_and_no_temporary_file(big_db, tmp_path, sig, code):
    # Seen: SIGTERM (a `timeout`, a closed session) left the hidden .partial files of the output and its card.
    out = tmp_path / "o.jsonl"
    out.write_text("old\n")
    proc = _export_process(big_db, out, "--force")
    deadline = time.monotonic() + 60
    while not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.3)
    proc.send_signal(sig)
    assert proc.wait(60) == code
    err = proc.stderr.read().strip()  # type: ignore[union-attr]
    assert err in ("rsr: interrupted", f"rsr: terminated ({sig.name})") and "Traceback" not in err
    assert out.read_text() == "old\n"
    assert _listing(tmp_path) == ["o.jsonl"]


@pytest.mark.parametrize(
    "kind", ["device", "link-to-device", "fifo", "directory", "not-duckdb", "under-a-file"]
)
def test_a_database_path_that_is_not_a_duckdb_file_is_refused_untouched(tmp_path, kind):
    # Seen: --db /dev/full had DuckDB write its header into the device (as root, a disk would do), and a
    # directory or another file ended the command with a traceback.
    db = tmp_path / "db"
    if kind == "device":
        db = Path("/dev/full")
    elif kind == "link-to-device":
        db.symlink_to("/dev/full")
    elif kind == "fifo":
        os.mkfifo(db)  # opened, it would block until a writer comes
    elif kind == "directory":
        db.mkdir()
    elif kind in ("not-duckdb", "under-a-file"):
        db.write_text("precious\n")
        db = db / "x.duckdb" if kind == "under-a-file" else db
    done = subprocess.run([*RSR, "list", "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"rsr: {db}: ")
    assert {
        "device": "is not a regular file (a device, fifo or socket); a database is a DuckDB file (not opened)",
        "link-to-device": "is not a regular file (a device, fifo or socket); a database is a DuckDB file (not "
        "opened)",
        "fifo": "is not a regular file (a device, fifo or socket); a database is a DuckDB file (not opened)",
        "directory": "is a directory; a database is a DuckDB file (not opened)",
        "not-duckdb": "cannot be opened as a database: IO Error: The file",
        "under-a-file": "cannot be used as a database: Not a directory",
    }[kind] in line
    if kind in ("not-duckdb", "under-a-file"):
        assert (tmp_path / "db").read_text() == "precious\n"
    assert not os.path.exists("/dev/full.wal") and not (tmp_path / "db.wal").exists()
