"""Output paths: nothing is clobbered, nothing is written beside the output but its card, writes are atomic."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from rsr_core.cli import main
from rsr_core.export import export
from rsr_core.outputs import AtomicFile, OutputError
from rsr_core.store import Store
from tests.export.corpus import add_rewrite


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
