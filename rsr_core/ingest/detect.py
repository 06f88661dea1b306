"""Format detection: walk paths recursively and name the unit each file or directory is.

The walk never leaves the roots it was given: a symlink that resolves outside every root is reported and not
followed. Every real directory and file is visited once (known by device and inode), so link loops cost
nothing. Dangling links and special files (FIFOs, sockets, devices: opening a FIFO would block) are reported,
never opened. Links are followed after the tree itself, so a file reachable both ways keeps its real name.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rsr_core.formats.reading import parse_json_bytes
from rsr_core.ingest.fs import inside, kind_of, read_input, real, shown
from rsr_core.ingest.harbor import is_trial_result
from rsr_core.ingest.tb1 import is_trial_results

UnitKind = Literal["atif", "harbor_trial", "tb1_trial", "harbor_task", "tb1_task", "error"]

# Loose files of these kinds sit beside trajectories (notes, logs) and are not ingested when a directory is
# walked. Named explicitly on the command line, any file must be ingestible.
_ASIDE = {".md", ".txt", ".log", ".cast", ".lock", ".yaml", ".yml", ".toml", ".py", ".sh", ".csv", ".html"}
EXPECTED = (
    "expected an ATIF trajectory.json, a harbor job/trial/task directory "
    "or a Terminal-Bench 1 run/task directory"
)
_Child = tuple[Path, os.stat_result, bool]


@dataclass(frozen=True)
class Unit:
    """One thing to ingest (a file or a directory) and its detected format."""

    kind: UnitKind
    path: Path
    error: str | None = None
    root: Path | None = None
    """Resolved directory the unit's reads must stay inside (None: the unit's own directory)."""
    size: int = 0
    """Bytes of the files the unit's parse reads, as far as the walk saw them (parsing costs many times that)."""


TRIAL_FILES = {
    "harbor_trial": (
        "result.json",
        "agent/trajectory.json",
        "verifier/test-stdout.txt",
        "verifier/reward.txt",
        "verifier/reward.json",
    ),
    "tb1_trial": ("results.json",),
}
_EPISODE_FILES = ("prompt.txt", "response.txt", "response.json")


def _peek_json(path: Path, root: Path) -> object:
    # Bounded like every JSON read, but not strict: a trial whose result.json repeats a key or nests too
    # deeply is still found, and refused naming the problem when it is parsed.
    try:
        return parse_json_bytes(read_input(path, root), strict=False)
    except (OSError, ValueError, RecursionError):
        return None


def _dir_kind(directory: Path, root: Path) -> UnitKind | None:
    # Paths as text (os.path), not Path objects: this runs for every directory of a corpus, before any parse.
    base = os.fspath(directory)
    if os.path.isfile(os.path.join(base, "task.toml")):
        return "harbor_task"
    if os.path.isfile(os.path.join(base, "task.yaml")):
        return "tb1_task"
    result = os.path.join(base, "result.json")
    if os.path.isfile(result) and (
        os.path.isdir(os.path.join(base, "agent")) or is_trial_result(_peek_json(Path(result), root))
    ):
        return "harbor_trial"
    results = os.path.join(base, "results.json")
    if os.path.isfile(results) and (
        os.path.isdir(os.path.join(base, "agent-logs")) or is_trial_results(_peek_json(Path(results), root))
    ):
        return "tb1_trial"
    return None


def _is_container(directory: Path) -> bool:
    """A harbor job dir or a Terminal-Bench run dir: its own summary files are not trajectories."""
    return any((directory / n).is_file() for n in ("result.json", "results.json", "run_metadata.json"))


def _wanted(path: Path, container: bool) -> bool:
    """Is a file met in a walk a candidate trajectory (not a note, log or a container's summary)?"""
    if container and path.suffix in (".json", ".log", "") and path.name != "trajectory.json":
        return False
    return path.suffix.lower() not in _ASIDE


class _Walker:
    """One walk over the given roots; `units` collects what was found, errors included."""

    def __init__(self, roots: list[Path]):
        self.roots = roots
        self.units: list[Unit] = []
        self._seen: set[tuple[int, int]] = set()
        self._links: deque[tuple[Path, Path, os.stat_result]] = deque()
        self._again = 0  # things met again (already walked under another name)

    def first_visit(self, info: os.stat_result) -> bool:
        """True the first time this device/inode is met."""
        key = (info.st_dev, info.st_ino)
        if key in self._seen:
            self._again += 1
            return False
        self._seen.add(key)
        return True

    def error(self, path: Path, message: str) -> None:
        self.units.append(Unit("error", path, message))

    def walk_root(self, path: Path, info: os.stat_result) -> None:
        """Walk a directory named on the command line, then the links found in it."""
        if not self.first_visit(info):
            return  # named twice
        before = len(self.units), self._again
        self._walk(path, real(path))
        self._follow_links()
        if (len(self.units), self._again) == before:
            self.error(path, f"directory holds nothing to ingest; {EXPECTED}")

    def _walk(self, start: Path, root: Path) -> None:
        # An explicit stack, not recursion: a hostile tree may be nested deeper than Python recurses.
        opened = self._open(start, root)
        stack: list[Iterator[_Child]] = [opened] if opened is not None else []
        while stack:
            try:
                path, info, container = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            mode = info.st_mode
            if stat.S_ISLNK(mode):
                self._link(path, container)
            elif stat.S_ISDIR(mode):
                if self.first_visit(info) and (child := self._open(path, root)) is not None:
                    stack.append(child)
            elif stat.S_ISREG(mode):
                if _wanted(path, container) and self.first_visit(info):
                    self.units.append(Unit("atif", path, root=root, size=info.st_size))
            else:
                self.error(
                    path, f"{kind_of(mode)}: not read (only regular files and directories are ingested)"
                )

    def _open(self, directory: Path, root: Path) -> Iterator[_Child] | None:
        """The directory as a unit, or an iterator over its entries (None when there is nothing to walk)."""
        try:
            kind = _dir_kind(directory, root)
            if kind is not None:
                self.units.append(self._claim(Unit(kind, directory, root=root)))
                return None
            with os.scandir(directory) as it:
                children = sorted(it, key=lambda e: e.name)
            container = _is_container(directory)
        except OSError as exc:
            self.error(directory, f"cannot read directory: {exc.strerror}")
            return None
        if not children:
            self.error(directory, f"empty directory; {EXPECTED}")
            return None
        return self._entries(children, container)

    def _claim(self, unit: Unit) -> Unit:
        """A trial with the size of the files its parse reads; an error when one of them was already read for
        another unit (hard links to one big file in every trial cost no disk, and each trial would read it
        again)."""
        if unit.kind not in TRIAL_FILES:
            return unit
        base = os.fspath(unit.path)  # text, not Path objects: this runs for every trial of a corpus
        names = list(TRIAL_FILES[unit.kind])
        logs = os.path.join(base, "agent-logs")
        if (
            unit.kind == "tb1_trial"
            and os.path.isdir(logs)
            and inside(real(logs), unit.root or real(unit.path))
        ):
            with os.scandir(logs) as it:
                episodes = [e.name for e in it if e.name.startswith("episode-")]
            names += [f"agent-logs/{ep}/{name}" for ep in episodes for name in _EPISODE_FILES]
        size = 0
        for rel in names:
            try:
                info = os.stat(os.path.join(base, rel))
            except OSError:
                continue  # missing, or unreadable: the parse says so
            if not stat.S_ISREG(info.st_mode):
                continue
            if not self.first_visit(info):
                return Unit(
                    "error",
                    unit.path,
                    f"{rel}: the same file as one already read for another run (a hard link or a link to it); "
                    "not read again",
                )
            size += info.st_size
        return Unit(unit.kind, unit.path, root=unit.root, size=size)

    def _entries(self, children: list[os.DirEntry], container: bool) -> Iterator[_Child]:
        for child in children:
            if child.name.startswith("."):
                continue
            path = Path(child.path)
            try:
                info = child.stat(follow_symlinks=False)
            except OSError as exc:
                self.error(path, f"cannot read: {exc.strerror}")
                continue
            yield path, info, container

    def _link(self, path: Path, container: bool) -> None:
        """Check a link now; follow it (later) only when it resolves inside a root."""
        where = real(path)
        holder = next((r for r in self.roots if inside(where, r)), None)
        if holder is None:
            self.error(path, f"symlink to {shown(where)} leaves the directories being ingested; not followed")
            return
        try:
            info = os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self.error(path, "symlink loop; not followed")
            else:
                self.error(path, f"dangling symlink to {shown(os.readlink(path))}; skipped")
            return
        if stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode) and _wanted(path, container)):
            self._links.append((path, holder, info))
        elif not stat.S_ISREG(info.st_mode):
            self.error(path, f"symlink to {kind_of(info.st_mode)}: not read")

    def _follow_links(self) -> None:
        while self._links:
            path, root, info = self._links.popleft()
            if not self.first_visit(info):
                continue  # already walked under its real name (or through another link): a loop or an alias
            if stat.S_ISDIR(info.st_mode):
                self._walk(path, root)
            else:
                self.units.append(Unit("atif", path, root=root, size=info.st_size))


def detect_units(paths: list[Path]) -> list[Unit]:
    """Every unit under the given paths, in a stable order; errors for missing paths, empty dirs, links that
    leave the roots, dangling links and special files."""
    roots = [real(p) for p in paths if os.path.isdir(p)]
    walker = _Walker(roots)
    for path in paths:
        try:
            os.lstat(path)
            info = os.stat(path)
        except OSError as exc:
            walker.error(path, _missing(path, exc))
            continue
        if stat.S_ISREG(info.st_mode):
            if walker.first_visit(info):
                walker.units.append(Unit("atif", path, root=real(path).parent, size=info.st_size))
        elif stat.S_ISDIR(info.st_mode):
            walker.walk_root(path, info)
        else:
            walker.error(path, f"{kind_of(info.st_mode)}: not a regular file or directory; {EXPECTED}")
    return walker.units


def _missing(path: Path, exc: OSError) -> str:
    """Why a path named on the command line cannot be walked."""
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"dangling symlink to {shown(os.readlink(path))}"
        return "no such file or directory"
    return f"cannot read: {exc.strerror}"
