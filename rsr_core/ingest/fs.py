"""Touching a stranger's corpus on disk.

Reads stay inside a root (a symlink that resolves outside it is refused, never followed), only regular files
are opened (opening a FIFO would block), and a file is read whole only below a size limit. Trees are listed
without following links, so a link loop costs nothing.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rsr_core.formats.reading import FormatError, decode_text, parse_json_bytes
from rsr_core.system import inside

MAX_INPUT_BYTES = 256 * 2**20
"""The largest file read into memory and parsed (JSON parsing needs several times the file's size)."""
SHOWN_PATH_CHARS = 300
_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def kind_of(mode: int) -> str:
    """What a file of this mode is, for messages ("a FIFO", "a socket", …, "a regular file")."""
    for test, name in _SPECIAL:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def shown(path: Path | str) -> str:
    """A path for a message, cut so that a hostile name cannot flood it."""
    text = str(path)
    return text if len(text) <= SHOWN_PATH_CHARS else text[: SHOWN_PATH_CHARS - 3] + "..."


def size_text(n: int) -> str:
    """1,234,567 bytes as '1.2 MB'."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def real(path: Path | str) -> Path:
    """The path with every symlink resolved (the path itself when a link dangles or loops, or changes while it
    is resolved: reads open it without following links, so that is safe)."""
    try:
        return Path(os.path.realpath(path))
    except OSError:
        return Path(os.path.abspath(path))


@functools.lru_cache(maxsize=64)
def real_root(root: Path) -> Path:
    """`real(root)`, worked out once per process: every file of an ingest is read under one of a few roots,
    and resolving a deep root again for each file was a tenth of parsing it. The root is the directory the
    user named (its own links are followed wherever it is opened); what lies below it is checked at each open."""
    return real(root)


def real_below(path: Path, root: Path) -> Path:
    """`real(path)` for a path under the resolved `root`: `path` itself when no component below the root is a
    link (looked at with lstat, one per component), else resolved in full."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return real(path)
    if ".." in parts:
        return real(path)
    current = real_root(root)
    if current != root:
        return real(path)
    for part in parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return real(path)
        except OSError:
            return real(path)
    return current


def read_input(path: Path, root: Path, name: str | None = None, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file that resolves inside `root`, or a FormatError that says why not.

    `name` is how messages call the file (default: its path relative to `root`)."""
    name = name or _relative(path, root)
    fd = _open_checked(path, root, name)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FormatError(f"{name}: {kind_of(info.st_mode)}, not a regular file; not read")
        if info.st_size > limit:
            raise FormatError(_too_large(name, info.st_size, limit))
        # Asked for its size (a request of `limit` bytes would have a buffer of that size made for every
        # file), then for the rest should it have grown meanwhile.
        data = handle.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:  # it grew while being read
        raise FormatError(_too_large(name, len(data), limit))
    return data


def _open_checked(path: Path, root: Path, name: str) -> int:
    """A descriptor of `path` opened inside `root`, or a FormatError.

    A path with no link under the root is opened straight, one component at a time with links refused: that
    alone proves it inside. Only a path with a link on its way (the open refuses it) is resolved first, to
    follow the link where it stays inside the root; the resolved path is then opened the same way, so a
    directory swapped for a symlink after it was resolved and checked (the tree is changing under the walk)
    makes the open fail instead of leading outside the root."""
    resolved_root = real_root(root)
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = ()
    if parts and ".." not in parts:
        try:
            return _open_parts(resolved_root, parts, name)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
    target = real(path)
    if not inside(target, resolved_root):
        raise FormatError(f"{name}: symlink to {shown(target)} leaves {shown(root)}; not read")
    try:
        return _open_parts(resolved_root, target.relative_to(resolved_root).parts, name)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FormatError(
                f"{name}: its path changed while it was read (a symlink appeared in it); not read"
            ) from None
        raise


def read_text(
    path: Path, root: Path, name: str | None = None, what: str = "text", limit: int = MAX_INPUT_BYTES
) -> str:
    """A UTF-8 text file read with `read_input`; every error starts with the file's name."""
    name = name or _relative(path, root)
    data = read_input(path, root, name, limit)
    try:
        return decode_text(data, what)
    except FormatError as exc:
        raise FormatError(f"{name}: {exc}") from None


def read_json(path: Path, root: Path, name: str | None = None, what: str = "JSON") -> tuple[Any, bytes]:
    """A JSON file read with `read_input`: the value and the raw bytes (for content hashing)."""
    name = name or _relative(path, root)
    data = read_input(path, root, name)
    try:
        return parse_json_bytes(data, what), data
    except FormatError as exc:
        raise FormatError(f"{name}: {exc}") from None


def stream_input(path: Path, root: Path, name: str, chunk: int = 2**20) -> Iterator[bytes]:
    """The bytes of a regular file inside `root` in chunks (for hashing files of any size)."""
    fd = _open_checked(path, root, name)
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FormatError(f"{name}: {kind_of(mode)}, not a regular file; not read")
        while block := handle.read(chunk):
            yield block


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: a FIFO would otherwise block the open until a writer comes.
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | _CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC


def _open_parts(root: Path, parts: tuple[str, ...], name: str) -> int:
    """Open `root` (resolved), then each of `parts` in the directory opened before, following no link."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise FormatError(f"{name}: cannot read {shown(root)}: {exc.strerror}") from None
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1] if parts else ".", _FILE_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        raise FormatError(f"{name}: missing (a dangling symlink?)") from None
    finally:
        os.close(fd)


def present(path: Path) -> bool:
    """Is there anything at `path` (a dangling link included, so that reading it reports it)?"""
    return os.path.lexists(path)


def _too_large(name: str, size: int, limit: int) -> str:
    return (
        f"{name}: file of {size_text(size)} ({size:,} bytes) is larger than the limit of "
        f"{size_text(limit)} ({limit:,} bytes) for a file read in memory; not read"
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix() or path.name
    except ValueError:
        return shown(path)


@dataclass(frozen=True)
class Entry:
    """One thing found in a tree listed without following links."""

    rel: str
    """Path relative to the tree's root, with / separators."""
    path: Path
    """The path as listed (under the root as given)."""
    kind: Literal["file", "dir", "link", "special"]
    """What lstat says it is."""
    size: int
    """Size in bytes (regular files)."""
    target: Path | None = None
    """For a link: where it resolves (None when it dangles or loops)."""
    what: str = ""
    """For a special file: what it is ("a FIFO", …)."""


def list_tree(root: Path, limit: int | None = None) -> list[Entry]:
    """Every entry under `root` in a stable order, links listed (with their resolved target), never followed.

    An unreadable directory is a FormatError naming it, and so is a tree of more than `limit` entries."""
    out: list[Entry] = []
    stack = [(root, "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise FormatError(f"{prefix or '.'}: cannot read directory: {exc.strerror}") from None
        subdirs = []
        if limit is not None and len(out) + len(children) > limit:
            raise FormatError(f"{prefix or '.'}: more than {limit:,} files, directories and links; not read")
        for child in children:
            rel = f"{prefix}{child.name}"
            path = Path(child.path)
            try:
                info = child.stat(follow_symlinks=False)
            except OSError as exc:
                raise FormatError(f"{rel}: cannot read: {exc.strerror}") from None
            mode = info.st_mode
            if stat.S_ISLNK(mode):
                out.append(Entry(rel, path, "link", 0, _link_target(path)))
            elif stat.S_ISDIR(mode):
                out.append(Entry(rel, path, "dir", 0))
                subdirs.append((path, rel + "/"))
            elif stat.S_ISREG(mode):
                out.append(Entry(rel, path, "file", info.st_size))
            else:
                out.append(Entry(rel, path, "special", 0, what=kind_of(mode)))
        stack.extend(reversed(subdirs))
    return out


def _link_target(path: Path) -> Path | None:
    try:
        os.stat(path)  # follows: fails when the link dangles or loops
    except OSError:
        return None
    return real(path)
