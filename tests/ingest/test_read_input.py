"""`read_input`: a path without links is opened straight; one with a link on its way is followed only where the
link stays inside the root."""

from __future__ import annotations

import os

import pytest

from rsr_core.formats.reading import FormatError
from rsr_core.ingest.fs import read_input, stream_input


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "root"
    (root / "trial" / "agent").mkdir(parents=True)
    (root / "trial" / "agent" / "trajectory.json").write_bytes(b'{"plain": true}')
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "kept.json").write_bytes(b'{"kept": true}')
    (tmp_path / "outside.json").write_bytes(b'{"secret": true}')
    return root


def test_a_plain_path_is_read(tree):
    assert read_input(tree / "trial" / "agent" / "trajectory.json", tree) == b'{"plain": true}'


def test_a_file_link_inside_the_root_is_followed(tree):
    link = tree / "trial" / "agent" / "linked.json"
    link.symlink_to(tree / "elsewhere" / "kept.json")
    assert read_input(link, tree) == b'{"kept": true}'
    assert b"".join(stream_input(link, tree, "linked.json")) == b'{"kept": true}'


def test_a_directory_link_inside_the_root_is_followed(tree):
    (tree / "trial" / "shortcut").symlink_to(tree / "elsewhere", target_is_directory=True)
    assert read_input(tree / "trial" / "shortcut" / "kept.json", tree) == b'{"kept": true}'


def test_a_root_given_through_a_link_reads_its_files(tree, tmp_path):
    (tmp_path / "alias").symlink_to(tree, target_is_directory=True)
    alias = tmp_path / "alias"
    assert read_input(alias / "trial" / "agent" / "trajectory.json", alias) == b'{"plain": true}'


@pytest.mark.parametrize("relative", [False, True])
def test_links_leading_outside_are_refused(tree, tmp_path, relative):
    link = tree / "trial" / "agent" / "out.json"
    link.symlink_to(
        os.path.relpath(tmp_path / "outside.json", link.parent) if relative else tmp_path / "outside.json"
    )
    with pytest.raises(FormatError, match="leaves"):
        read_input(link, tree, "out.json")
    (tree / "trial" / "up").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(FormatError, match="leaves"):
        read_input(tree / "trial" / "up" / "outside.json", tree, "outside.json")


def test_a_dotdot_path_is_judged_where_it_resolves(tree, tmp_path):
    with pytest.raises(FormatError, match="leaves"):
        read_input(tree / "trial" / ".." / ".." / "outside.json", tree, "outside.json")
    assert read_input(tree / "trial" / ".." / "elsewhere" / "kept.json", tree) == b'{"kept": true}'


def test_the_size_limit_is_exact(tree):
    path = tree / "trial" / "agent" / "trajectory.json"
    size = path.stat().st_size
    assert read_input(path, tree, limit=size) == b'{"plain": true}'
    with pytest.raises(FormatError, match="larger than the limit"):
        read_input(path, tree, limit=size - 1)


def test_a_missing_file_and_a_fifo_are_refused(tree):
    with pytest.raises(FormatError, match="missing"):
        read_input(tree / "trial" / "agent" / "gone.json", tree, "gone.json")
    fifo = tree / "trial" / "agent" / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(FormatError, match="a FIFO, not a regular file"):
        read_input(fifo, tree, "pipe.json")
