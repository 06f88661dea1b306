"""Writing output files and directories the user asked for, and nothing else.

Every command that writes (`rsr export --out`, `rsr discover --out`, the app's export) goes through here:

- an existing path is refused unless `force`; with `force` it is replaced only when it is a regular file, or a
  directory that `ours` recognises as an earlier output of the same kind (never a device, fifo, socket or
  symlink, never someone else's directory);
- writes are atomic: the content goes to a hidden temporary name in the same directory and is renamed into
  place only when complete, so a failed or interrupted write leaves the old output (or nothing) behind;
- only the parent directories of the output are created; nothing else is written beside it;
- without `force` nothing is replaced, even by a command writing the same output at the same time (the last
  step, a link or rename, fails when the path has appeared meanwhile);
- `-` (standard output) and a file output named with a trailing `/` are refused: they would create a file
  called `-`, or a file where a directory was meant;
- a signal (Ctrl-C, SIGTERM, SIGHUP) never leaves a temporary name behind: each is recorded before it is
  created, so `remove_leftovers` finds those an unwinding could not reach, and a swap into place is not
  interrupted half way.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, NoReturn

from rsr_core.errors import RsrError


class OutputError(RsrError):
    """An output path cannot be written; the message names the path and the reason."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a fifo"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "a regular file"


def check_output(
    path: Path, force: bool, directory: bool = False, ours: Callable[[Path], bool] | None = None
) -> None:
    """Refuse `path` as an output unless it is new, or `force` is given and replacing it is safe.

    `directory`: the output is a directory; an existing empty directory is accepted as it is (nothing is lost),
    a non-empty one only with `force` and when `ours(path)` says it is an earlier output of the same kind.
    """
    try:
        st = path.lstat()
    except FileNotFoundError:
        _check_parent(path)
        return
    except OSError as exc:
        raise OutputError(f"{path}: cannot be used as an output: {exc.strerror or exc}") from None
    kind = _kind(st.st_mode)
    if directory and stat.S_ISDIR(st.st_mode):
        if not any(path.iterdir()):
            return
        if not force:
            raise OutputError(f"{path}: exists and is not empty; pass --force to replace an earlier output")
        if ours is None or not ours(path):
            raise OutputError(
                f"{path}: is a directory that is not an earlier output of this kind; not replaced"
            )
        return
    if not stat.S_ISREG(st.st_mode):
        expected = "a new directory" if directory else "a new or regular file"
        raise OutputError(f"{path}: is {kind}; expected {expected} (not replaced, even with --force)")
    if directory:
        raise OutputError(f"{path}: is a regular file; this output is a directory (not replaced)")
    if not force:
        raise OutputError(f"{path}: exists; pass --force to replace it")


def output_path(text: str | Path, directory: bool = False) -> Path:
    """The path an `--out` value names, refused when it cannot mean a file (or directory) to write here."""
    raw = os.fspath(text)
    if raw == "-":
        raise OutputError("-: writing to standard output is not supported; give a path to write to")
    if not raw.strip():
        raise OutputError("an empty output path; give a path to write to")
    path = Path(raw)
    if not directory and (raw.endswith(("/", "/.", "/..")) or path.name in ("", ".", "..")):
        raise OutputError(f"{raw}: names a directory; this output is a file (give a file name)")
    return path


def _check_parent(path: Path) -> None:
    parent = path.parent
    for ancestor in (parent, *parent.parents):
        if ancestor.exists() or ancestor.is_symlink():
            if not ancestor.is_dir():
                raise OutputError(f"{path}: {ancestor} is not a directory")
            return


_PENDING: set[Path] = set()  # temporary names that may exist and are not yet moved into place or removed


def _temp_name(path: Path) -> Path:
    """A new temporary name beside `path`, recorded as pending before anything is created under it."""
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.partial")
    _PENDING.add(temp)
    return temp


def _remove(temp: Path) -> None:
    if temp.is_dir() and not temp.is_symlink():
        shutil.rmtree(temp, ignore_errors=True)
    else:
        temp.unlink(missing_ok=True)
    _PENDING.discard(temp)


def remove_leftovers() -> None:
    """Remove every temporary file or directory still pending (the CLI calls it when a signal ended a command:
    one that landed between creating a temporary name and the code that would remove it)."""
    for temp in list(_PENDING):
        _remove(temp)


_UNWINDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Signals that unwind a command wait until the block is done (in the main thread, where Python runs signal
    handlers): a swap of two renames, or an output and its card, is never left half done. The first signal
    caught is raised again afterwards."""
    held = [signal.getsignal(s) for s in _UNWINDING]
    if threading.current_thread() is not threading.main_thread() or any(h is None for h in held):
        yield
        return
    caught: list[int] = []
    for sig in _UNWINDING:
        signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in zip(_UNWINDING, held, strict=True):
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{path}: cannot create {path.parent}: {exc.strerror or exc}") from None


class AtomicFile:
    """A file written under a temporary name in its directory and renamed into place by `commit`."""

    def __init__(self, path: Path, force: bool = False, binary: bool = False):
        check_output(path, force)
        _make_parent(path)
        self.path = path
        self.force = force
        self.temp = _temp_name(path)
        try:
            fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as exc:
            _PENDING.discard(self.temp)
            raise OutputError(f"{path}: cannot write in {path.parent}: {exc.strerror or exc}") from None
        self.handle: IO[Any] = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")

    def commit(self) -> None:
        """Close and move into place (the check is repeated: the path may have changed meanwhile)."""
        self.handle.close()
        try:
            st = self.path.lstat()
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            self.abort()
            raise OutputError(f"{self.path}: became {_kind(st.st_mode)} while writing; not replaced")
        with uninterrupted():
            if self.force:
                os.replace(self.temp, self.path)
                _PENDING.discard(self.temp)
                return
            try:  # a link fails when the path exists: another writer may have put it there meanwhile
                os.link(self.temp, self.path)
            except FileExistsError:
                self._appeared()
            except OSError:  # a file system without hard links (FAT, some network mounts): check, then rename
                if os.path.lexists(self.path):
                    self._appeared()
                os.replace(self.temp, self.path)
                _PENDING.discard(self.temp)
                return
            _remove(self.temp)

    def _appeared(self) -> NoReturn:
        """Another writer put the path there while this one wrote: nothing replaced, nothing left."""
        self.abort()
        raise OutputError(f"{self.path}: appeared while writing; pass --force to replace it") from None

    def abort(self) -> None:
        """Remove what was written."""
        if not self.handle.closed:
            self.handle.close()
        _remove(self.temp)


class AtomicDir:
    """A directory filled under a temporary name and swapped into place by `commit`."""

    def __init__(self, path: Path, force: bool = False, ours: Callable[[Path], bool] | None = None):
        check_output(path, force, directory=True, ours=ours)
        _make_parent(path)
        self.path = path
        self.force = force
        self.temp = _temp_name(path)
        try:
            self.temp.mkdir()
        except OSError as exc:
            _PENDING.discard(self.temp)
            raise OutputError(f"{path}: cannot write in {path.parent}: {exc.strerror or exc}") from None

    def commit(self) -> None:
        """Move the directory into place; an earlier output (or an empty directory) is removed after the swap."""
        with uninterrupted():
            old = self._swap()
        if old is not None:  # the earlier output, now under a pending temporary name
            _remove(old)

    def _swap(self) -> Path | None:
        """Move the directory into place; returns where an earlier output was moved aside (to be removed)."""
        if not self.force:  # a rename onto a directory that is not empty (another writer's) fails
            try:
                os.rename(self.temp, self.path)
            except OSError as exc:
                self.abort()
                raise OutputError(
                    f"{self.path}: appeared while writing ({exc.strerror}); pass --force to replace an earlier "
                    "output"
                ) from None
            _PENDING.discard(self.temp)
            return None
        old = None
        if self.path.is_dir() and not self.path.is_symlink():
            old = _temp_name(self.path)
            os.rename(self.path, old)
        elif self.path.exists() or self.path.is_symlink():
            self.abort()
            raise OutputError(f"{self.path}: appeared while writing; not replaced")
        os.rename(self.temp, self.path)
        _PENDING.discard(self.temp)
        return old

    def abort(self) -> None:
        """Remove what was written."""
        _remove(self.temp)
