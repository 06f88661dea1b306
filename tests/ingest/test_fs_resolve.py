"""Resolving paths below an ingest's root: the shortcut gives what a full resolution gives, links included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rsr_core.ingest.detect import Unit
from rsr_core.ingest.fs import real, real_below, real_root
from rsr_core.ingest.signatures import unit_key


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A root with a plain job, a job that is a link to another job inside, a trial that is a link, a link
    leaving the root and a dangling one."""
    root = tmp_path / "jobs"
    (root / "job" / "trial" / "agent").mkdir(parents=True)
    (root / "other" / "t2").mkdir(parents=True)
    (root / "alias").symlink_to(root / "other")
    (root / "job" / "linked").symlink_to(root / "other" / "t2")
    (tmp_path / "outside").mkdir()
    (root / "job" / "out").symlink_to(tmp_path / "outside")
    (root / "job" / "gone").symlink_to(root / "nowhere")
    return root


CASES = (
    "job/trial",
    "job/trial/agent",
    "alias/t2",
    "job/linked",
    "job/out",
    "job/gone",
    "job/missing",
    "job/../other/t2",
    "job/linked/../../job/trial",
)


@pytest.mark.parametrize("rel", CASES)
def test_resolving_below_the_root_is_a_full_resolution(tree: Path, rel: str) -> None:
    path = tree / rel
    assert real_below(path, real(tree)) == Path(os.path.realpath(path))
    assert unit_key(Unit("harbor_trial", path, root=real(tree))) == os.path.realpath(path)


def test_a_root_named_through_a_link_is_resolved_in_full(tmp_path: Path, tree: Path) -> None:
    (tmp_path / "via").symlink_to(tree)
    path = tmp_path / "via" / "job" / "trial"
    assert real_below(path, tmp_path / "via") == Path(os.path.realpath(path))


def test_a_path_outside_the_root_is_resolved_in_full(tmp_path: Path, tree: Path) -> None:
    path = tmp_path / "outside"
    assert real_below(path, real(tree)) == Path(os.path.realpath(path))


def test_the_root_is_resolved_once(tree: Path) -> None:
    real_root.cache_clear()
    for _ in range(3):
        real_below(tree / "job" / "trial", real(tree))
    assert real_root.cache_info().misses == 1
