"""A task's build context cannot make the copy (or the build) fill the disk: sparse files, hard links to one
big file and directories linked many times are refused before they are copied, on the real Docker engine."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import pytest

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.models import Task
from rsr_core.sandbox.images import MAX_CONTEXT_BYTES, MAX_CONTEXT_ENTRIES, ImageError, task_image
from rsr_core.settings import Settings
from tests.ingest.hostile import harbor_task

pytestmark = pytest.mark.docker


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch) -> Path:
    """This test's own temporary directory for the build contexts (another test may build at the same time)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def _refused(docker_engine, task: Path, stored: Task) -> str:
    """Build the task as it was ingested (`stored`) from its directory as it is now: ingest refuses a task
    this large, so these grew after it was stored."""
    with pytest.raises(ImageError) as refused:
        task_image(docker_engine, stored, Settings())
    assert os.listdir(tempfile.gettempdir()) == []  # the partial copy is gone
    assert docker_engine.images.list(filters={"label": f"rsr.task={task.name}"}) == []
    return str(refused.value)


@pytest.mark.timeout(120)
def test_a_sparse_file_in_the_environment_is_not_copied(docker_engine, tmp_path):
    # Seen: a 5 GiB sparse file (no disk used) was copied block by block into the context, filling /tmp.
    task = harbor_task(tmp_path / f"sparse-{uuid.uuid4().hex[:8]}", name="sparse")
    stored = read_harbor_task(task)
    with (task / "environment" / "model.bin").open("wb") as handle:
        handle.truncate(5 * 2**30)
    message = _refused(docker_engine, task, stored)
    assert message == (
        f"task sparse: environment/model.bin: the build context would hold more than {MAX_CONTEXT_BYTES:,} "
        "bytes (a sparse file, or a file or directory copied many times?); not copied into the build context"
    )


@pytest.mark.timeout(120)
def test_links_to_one_big_file_are_counted_each_time(docker_engine, tmp_path):
    task = harbor_task(tmp_path / "links", name="links")
    stored = read_harbor_task(task)
    big = task / "data.bin"  # in the task, outside the context: each link is copied as the file's content
    with big.open("wb") as handle:
        handle.truncate(2**30)
    for n in range(6):
        os.symlink("../data.bin", task / "environment" / f"copy{n}.bin")
    message = _refused(docker_engine, task, stored)
    assert message.startswith("task links: environment/copy3.bin: the build context would hold more than")


@pytest.mark.timeout(120)
def test_directories_linked_twice_at_every_level_are_refused(docker_engine, tmp_path):
    # Thirty levels of a directory holding two links to the next: a billion directories once copied.
    task = harbor_task(tmp_path / "laughs", name="laughs")
    stored = read_harbor_task(task)
    levels = task / "levels"
    for n in range(30):
        (levels / f"d{n}").mkdir(parents=True)
        if n:
            for name in ("a", "b"):
                os.symlink(f"../d{n}", levels / f"d{n - 1}" / name)
    os.symlink("../levels/d0", task / "environment" / "tree")
    message = _refused(docker_engine, task, stored)
    # Refused at the first link whose directory makes the copy too large (d13's tree holds 2^17 - 2 entries):
    # each directory is counted once and its total added at every link to it, not walked 100,000 times over
    # (which took 34 s on a loaded machine and named a link thirty levels down).
    assert message == (
        f"task laughs: levels/d13/b: the build context would hold more than {MAX_CONTEXT_ENTRIES:,} files, "
        "directories and links; not copied into the build context"
    )


@pytest.mark.timeout(120)
def test_a_directory_linked_from_two_places_is_copied_at_both(docker_engine, tmp_path):
    task = harbor_task(tmp_path / "twice", name=f"twice-{uuid.uuid4().hex[:8]}")
    stored = read_harbor_task(task)
    (task / "shared" / "inner").mkdir(parents=True)
    (task / "shared" / "inner" / "notes.txt").write_text("shared notes\n")
    env = task / "environment"
    os.symlink("../shared", env / "first")
    (env / "deeper").mkdir()
    os.symlink("../../shared", env / "deeper" / "second")
    tag = task_image(docker_engine, stored, Settings())
    try:
        out = docker_engine.containers.run(
            tag,
            ["sh", "-c", "cat /ctx/first/inner/notes.txt /ctx/deeper/second/inner/notes.txt"],
            remove=True,
        )
        assert out.decode() == "shared notes\nshared notes\n"
    finally:
        docker_engine.images.remove(tag, force=True)
