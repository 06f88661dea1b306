"""Reading a container's filesystem through the engine's archive API, never through a command inside it.

The verifier reads what the agent left behind (symlinks, scripts, reward files) without trusting any binary
the agent could have replaced: `stat` is the archive HEAD call, `readlink` and `read_regular` unpack one tar
member. Reads are bounded: only regular files, only up to a size cap, so a FIFO, a symlink to /dev/zero or a
huge file cannot hang or flood the reader.

Every container started from one image starts with the image's files, so what lookups read there is kept per
image (`ImageReads`) once the container is frozen and its diff known (`trust_diff`). A path counts as the
image's when it is not in the diff and no directory above it was added or deleted, each one the run changed
still being a real directory: the engine lists every file the run wrote, and every image entry a re-created
directory hides as deleted. A path found there is then the image's own entry, so what it reads is kept; a
path found missing is kept only when no directory above it changed at all (a directory the run re-created over
a link of the image hides what the link led to). What is kept and no longer there only adds ground. Only
lookups of paths with every directory resolved use it (`chain`, `canonical`, `read_resolved`), never a
symlink's stat (its resolved target lies elsewhere), never the engine's own mounts.
"""

from __future__ import annotations

import base64
import io
import json
import posixpath
import tarfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import docker
import docker.errors

from rsr_core.sandbox.engine_http import engine_url

# Go's os.FileMode type bits, as the engine reports them in the path stat.
_MODE_DIR = 1 << 31
_MODE_SYMLINK = 1 << 27
_MODE_TYPE = _MODE_DIR | _MODE_SYMLINK | 1 << 26 | 1 << 25 | 1 << 24 | 1 << 21 | 1 << 19
MAX_HOPS = 40
MISSING = "missing"
RACED = "changed while being read"
# Mounted by the engine into every container: not in the diff, not the image's.
ENGINE_MOUNTS = ("/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/dev", "/proc", "/sys", "/sbin/docker-init",
                 "/usr/sbin/docker-init", "/.dockerenv")  # fmt: skip


def under(path: str, prefixes: Iterable[str]) -> bool:
    """`path` is one of `prefixes` or lies below one."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


@dataclass(frozen=True)
class PathStat:
    """What the engine says about one path (the last component not followed)."""

    size: int
    mode: int
    link_target: str
    """For a symlink: its target, resolved inside the container as far as it exists."""

    @property
    def is_symlink(self) -> bool:
        """The path is a symbolic link."""
        return bool(self.mode & _MODE_SYMLINK)

    @property
    def is_dir(self) -> bool:
        """The path is a directory."""
        return bool(self.mode & _MODE_DIR)

    @property
    def is_regular(self) -> bool:
        """The path is a regular file (not a link, directory, FIFO, socket or device)."""
        return not self.mode & _MODE_TYPE


class ImageReads:
    """What lookups read of each image's own files, for the containers started from it (the images used last
    kept)."""

    def __init__(self, max_images: int = 32, max_entries: int = 20_000):
        self.max_images = max_images
        self.max_entries = max_entries
        self._tables: OrderedDict[str, dict[tuple, object]] = OrderedDict()
        self._lock = threading.Lock()

    def table(self, image_id: str) -> dict[tuple, object]:
        """The reads kept for one image (created empty on first use)."""
        with self._lock:
            table = self._tables.pop(image_id, None)
            if table is None or len(table) > self.max_entries:
                table = {}
            self._tables[image_id] = table
            while len(self._tables) > self.max_images:
                self._tables.popitem(last=False)
            return table


_NOT_KEPT = object()
_T = TypeVar("_T")


def _found(read: object) -> bool:
    """The read found an entry at its path (a stat, a link's target, a file's content or why it was not read)."""
    if isinstance(read, tuple):
        return read[1] not in (MISSING, RACED)
    return read is not None


class ContainerFS:
    """Engine-side reads of one container's filesystem (running, paused or stopped)."""

    def __init__(
        self,
        api: docker.APIClient,
        container_id: str,
        image_id: str | None = None,
        image_reads: ImageReads | None = None,
    ):
        self.api = api
        self.container_id = container_id
        self._canonical: dict[str, str] = {"/": "/"}
        self._image = image_reads.table(image_id) if image_reads is not None and image_id else None
        self._changed: Mapping[str, str] | None = None
        self._dir_here: dict[str, bool] = {}

    def trust_diff(self, changed: Mapping[str, str]) -> None:
        """`changed` is the container's whole diff (path → added, changed or deleted; the engine's mounts left
        out) and the container is frozen: lookups of the paths it leaves alone may use the image's reads."""
        self._changed = changed

    def _image_view(self, path: str) -> str | None:
        """ "pristine" when neither `path` nor a directory above it is in the diff, "merged" when only changed
        directories above it are (each a real directory here), None when the image's reads do not hold."""
        if self._changed is None or path != posixpath.normpath(path):
            return None
        if not path.startswith("/") or path in self._changed or under(path, ENGINE_MOUNTS):
            return None
        view = "pristine"
        parent = posixpath.dirname(path)
        while parent != "/":
            kind = self._changed.get(parent)
            if kind is not None:
                if kind != "changed" or not self._is_dir_here(parent):
                    return None
                view = "merged"
            parent = posixpath.dirname(parent)
        return view

    def _is_dir_here(self, path: str) -> bool:
        if path not in self._dir_here:
            st = self.stat(path)
            self._dir_here[path] = st is not None and st.is_dir
        return self._dir_here[path]

    def _shared(self, key: tuple, read: Callable[[], _T]) -> _T:
        view = None if self._image is None else self._image_view(key[1])
        if view is None or self._image is None:
            return read()
        got = self._image.get(key, _NOT_KEPT)
        if got is not _NOT_KEPT:
            return got  # type: ignore[return-value]
        fresh = read()
        symlink = isinstance(fresh, PathStat) and fresh.is_symlink
        if (view == "pristine" or _found(fresh)) and not symlink:
            self._image[key] = fresh
        return fresh

    def stat(self, path: str) -> PathStat | None:
        """The path's stat, or None when it does not exist."""
        res = self.api.head(
            engine_url(self.api, "/containers/{0}/archive", self.container_id), params={"path": path}
        )
        if res.status_code == 404:
            return None
        if res.status_code >= 400:
            raise docker.errors.APIError(f"stat {path}: HTTP {res.status_code}", res)
        raw = res.headers.get("X-Docker-Container-Path-Stat")
        info = json.loads(base64.b64decode(raw)) if raw else {}
        return PathStat(int(info.get("size") or 0), int(info.get("mode") or 0), info.get("linkTarget") or "")

    def _member(self, path: str, max_bytes: int) -> tuple[tarfile.TarInfo, bytes] | None:
        try:
            stream, _ = self.api.get_archive(self.container_id, path)
        except docker.errors.NotFound:
            return None
        buf = bytearray()
        for chunk in stream:
            buf += chunk
            if len(buf) > max_bytes + 4096:  # a header, the content and padding; anything more is refused
                break
        with tarfile.open(fileobj=io.BytesIO(bytes(buf))) as tar:
            member = tar.next()
            if member is None:
                return None
            data = b""
            if member.isreg() and member.size <= max_bytes:
                handle = tar.extractfile(member)
                data = handle.read() if handle else b""
            return member, data

    def readlink(self, path: str) -> str | None:
        """A symlink's own target as written (None when the path is not a symlink)."""
        got = self._member(path, 0)
        return got[0].linkname if got and got[0].issym() else None

    def read_regular(self, path: str, max_bytes: int) -> tuple[bytes | None, str | None]:
        """(content, None) for a regular file of at most `max_bytes`, else (None, why not)."""
        st = self.stat(path)
        if st is None:
            return None, MISSING
        if not st.is_regular:
            return None, "not a regular file"
        if st.size > max_bytes:
            return None, f"larger than {max_bytes} bytes ({st.size})"
        got = self._member(path, max_bytes)
        if got is None or not got[0].isreg() or got[0].size > max_bytes:
            return None, RACED
        return got[1], None

    def _resolved_stat(self, path: str) -> PathStat | None:
        return self._shared(("stat", path), partial(self.stat, path))

    def read_resolved(self, path: str, max_bytes: int) -> tuple[bytes | None, str | None]:
        """`read_regular` of a path with no symlink above it (the last hop `chain` returned)."""
        return self._shared(("read", path, max_bytes), partial(self.read_regular, path, max_bytes))

    def canonical(self, path: str) -> str:
        """The path with every directory component's symlinks resolved (the last component kept as is)."""
        path = posixpath.normpath("/" + path.lstrip("/"))
        parent, name = posixpath.split(path)
        return posixpath.join(self._canonical_dir(parent), name) if name else "/"

    def _canonical_dir(self, path: str) -> str:
        if path in self._canonical:
            return self._canonical[path]
        parent, name = posixpath.split(path)
        real = posixpath.join(self._canonical_dir(parent), name)
        st = self._resolved_stat(real)
        if st is not None and st.is_symlink and st.link_target:
            real = posixpath.normpath(st.link_target)
        self._canonical[path] = real
        return real

    def chain(self, path: str) -> list[str]:
        """Every path a lookup of `path` passes through: the path and each symlink hop, ending at the file
        itself (or at the first missing path)."""
        seen: list[str] = []
        current = self.canonical(path)
        for _ in range(MAX_HOPS):
            if current in seen:
                break
            seen.append(current)
            st = self._resolved_stat(current)
            if st is None or not st.is_symlink:
                break
            target = self._shared(("link", current), partial(self.readlink, current))
            if not target:
                break
            current = self.canonical(posixpath.join(posixpath.dirname(current), target))
        return seen
