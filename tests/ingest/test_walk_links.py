"""The directory walk on hostile trees: links, loops, special files, huge and unreadable files."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from rsr_core.ingest.fs import MAX_INPUT_BYTES
from rsr_core.ingest.runner import ingest_paths
from rsr_core.models import IngestReport
from rsr_core.store import Store
from tests.ingest.hostile import atif, errors_by_name, rsr, write_json


def _loop_tree(tmp_path, links: dict[str, str]):
    tree = tmp_path / "tree"
    write_json(tree / "t.json", atif("s1"))
    write_json(tree / "sub" / "u.json", atif("s2"))
    for name, target in links.items():
        os.symlink(target, tree / name)
    return tree


@pytest.mark.parametrize(
    "links",
    [
        {"a": ".", "b": "."},  # seen: hung `rsr ingest` with growing memory
        {"self": "."},  # seen: one file read 41 times
        {"sub/up": "..", "sub/here": ".", "c": "sub"},
    ],
    ids=["a-b-dot", "self", "up-here-alias"],
)
def test_link_loops_visit_every_file_once(tmp_path, links):
    tree = _loop_tree(tmp_path, links)
    status, report, stderr = rsr("ingest", str(tree), "--db", str(tmp_path / "x.duckdb"), timeout=120)
    assert status == 0, stderr
    assert report == {"files": 2, "trajectories_added": 2, "duplicates": 0, "tasks_added": 1, "errors": []}


def test_a_link_to_the_parent_is_reported_not_followed(tmp_path):
    tree = _loop_tree(tmp_path, {"self": ".", "parent": ".."})
    write_json(tmp_path / "beside.json", atif("beside"))
    status, report, stderr = rsr("ingest", str(tree), "--db", str(tmp_path / "x.duckdb"), timeout=120)
    assert status == 1 and "Traceback" not in stderr
    assert report["trajectories_added"] == 2
    assert errors_by_name(report["errors"]) == {
        "parent": f"symlink to {tmp_path} leaves the directories being ingested; not followed"
    }


def test_links_out_of_the_tree_are_reported_and_nothing_behind_them_is_read(file_store, tmp_path):
    outside = write_json(tmp_path / "outside" / "secret.json", atif("secret"))
    tree = tmp_path / "tree"
    write_json(tree / "ok.json", atif("ok"))
    os.symlink("../outside/secret.json", tree / "link.json")
    os.symlink("../outside", tree / "dir_link")
    os.symlink("/etc/passwd", tree / "passwd.json")
    os.symlink(str(outside), tree / "abs.json")
    report = ingest_paths(file_store, [tree])
    errors = errors_by_name(report.errors)
    assert set(errors) == {"link.json", "dir_link", "passwd.json", "abs.json"}
    assert errors["passwd.json"] == (
        "symlink to /etc/passwd leaves the directories being ingested; not followed"
    )
    assert all("not followed" in e for e in errors.values())
    assert report.trajectories_added == 1
    assert file_store.get_trajectory("secret") is None


def test_two_roots_may_link_into_each_other(store, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_json(b / "real.json", atif("real"))
    a.mkdir()
    os.symlink("../b/real.json", a / "alias.json")
    report = ingest_paths(store, [a, b])
    assert report.errors == [] and report.trajectories_added == 1 and report.duplicates == 0


def test_an_alias_inside_the_tree_is_read_once_under_the_real_name(store, tmp_path):
    write_json(tmp_path / "real.json", atif("real"))
    os.symlink("real.json", tmp_path / "a_alias.json")  # sorts first
    report = ingest_paths(store, [tmp_path])
    assert report.files == 1 and report.trajectories_added == 1 and report.duplicates == 0
    assert store.get_trajectory("real").origin.endswith("/real.json")


def test_dangling_links_and_link_loops_are_reported(store, tmp_path):
    write_json(tmp_path / "ok.json", atif("ok"))
    os.symlink("missing.json", tmp_path / "gone.json")
    os.symlink("loop.json", tmp_path / "loop.json")
    report = ingest_paths(store, [tmp_path])
    errors = errors_by_name(report.errors)
    assert errors == {
        "gone.json": "dangling symlink to missing.json; skipped",
        "loop.json": "symlink loop; not followed",
    }
    assert report.trajectories_added == 1


def test_special_files_are_never_opened(tmp_path):
    tree = tmp_path / "tree"
    write_json(tree / "ok.json", atif("ok"))
    os.mkfifo(tree / "pipe.json")  # opening it for reading would block until a writer comes
    os.symlink("pipe.json", tree / "to_pipe.json")
    trial = tree / "trial"
    write_json(trial / "result.json", {"task_name": "t", "trial_name": "trial-1"})
    (trial / "agent").mkdir()
    (trial / "verifier").mkdir()
    os.mkfifo(trial / "verifier" / "reward.txt")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tree / "sock.json"))
    try:
        status, report, stderr = rsr("ingest", str(tree), "--db", str(tmp_path / "x.duckdb"), timeout=120)
    finally:
        sock.close()
    assert status == 1 and "Traceback" not in stderr
    errors = errors_by_name(report["errors"])
    assert errors["pipe.json"].startswith("a FIFO: not read")
    assert errors["to_pipe.json"] == "symlink to a FIFO: not read"
    assert errors["sock.json"].startswith("a socket: not read")
    assert errors["trial"] == "verifier/reward.txt: a FIFO, not a regular file; not read"
    assert report["trajectories_added"] == 1


def test_a_file_too_large_to_parse_is_refused_with_its_size_and_the_limit(store, tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as handle:  # sparse: costs no disk and is never read
        handle.truncate(MAX_INPUT_BYTES + 1)
    report = ingest_paths(store, [big])
    (error,) = report.errors
    assert error.error == (
        f"big.json: file of 256.0 MB ({MAX_INPUT_BYTES + 1:,} bytes) is larger than the limit of 256.0 MB "
        f"({MAX_INPUT_BYTES:,} bytes) for a file read in memory; not read"
    )


def test_a_tree_deeper_than_python_recurses(store, tmp_path):
    chain = [tmp_path]
    for _ in range(1200):  # deeper than Python's default recursion limit of 1000
        chain.append(chain[-1] / "d")
        chain[-1].mkdir()
    leaf = write_json(chain[-1] / "t.json", atif("deep"))
    try:
        report = ingest_paths(store, [tmp_path])
        assert report.errors == [] and report.trajectories_added == 1
    finally:  # pytest's own clean-up removes trees recursively, so it could not remove this one
        leaf.unlink()
        for directory in reversed(chain[1:]):
            directory.rmdir()


@pytest.fixture
def open_tmp():
    """A temporary directory others may enter (pytest's own are the owner's only)."""
    path = Path(tempfile.mkdtemp(prefix="rsr-test-"))
    path.chmod(0o755)
    yield path
    for sub in path.rglob("*"):
        if sub.is_dir() and not sub.is_symlink():
            sub.chmod(0o755)
    shutil.rmtree(path)


def test_unreadable_files_and_directories_are_reported(open_tmp):
    tree = open_tmp / "tree"
    write_json(tree / "ok.json", atif("ok"))
    write_json(tree / "locked.json", atif("locked")).chmod(0)
    (tree / "closed").mkdir()
    write_json(tree / "closed" / "in.json", atif("in"))
    (tree / "closed").chmod(0)
    # Root reads anything: the ingest runs in a forked child that gives up root first.
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            os.close(read_end)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            report = ingest_paths(Store(":memory:"), [tree], workers=1)
            os.write(write_end, report.model_dump_json().encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    (tree / "closed").chmod(0o755)
    assert os.waitstatus_to_exitcode(status) == 0
    report = IngestReport.model_validate_json(data)
    assert errors_by_name(report.errors) == {
        "closed": "cannot read directory: Permission denied",
        "locked.json": "cannot read: Permission denied",
    }
    assert report.trajectories_added == 1
