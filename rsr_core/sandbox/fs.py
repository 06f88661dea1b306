"""Reading a container's filesystem through the engine's archive API, never through a command inside it.

The verifier reads what the agent left behind (symlinks, scripts, reward files) without trusting any binary
the agent could have replaced: `stat` is the archive HEAD call, `readlink` and `read_regular` unpack one tar
member. Reads are bounded: only regular files, only up to a size cap, so a FIFO, a symlink to /dev/zero or a
huge file cannot hang or flood the reader.
"""

from __future__ import annotations

import base64
import io
import json
import posixpath
import tarfile
from dataclasses import dataclass

import docker
import docker.errors

from rsr_core.sandbox.engine_http import engine_url

# Go's os.FileMode type bits, as the engine reports them in the path stat.
_MODE_DIR = 1 << 31
_MODE_SYMLINK = 1 << 27
_MODE_TYPE = _MODE_DIR | _MODE_SYMLINK | 1 << 26 | 1 << 25 | 1 << 24 | 1 << 21 | 1 << 19
MAX_HOPS = 40


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


class ContainerFS:
    """Engine-side reads of one container's filesystem (running, paused or stopped)."""

    def __init__(self, api: docker.APIClient, container_id: str):
        self.api = api
        self.container_id = container_id
        self._canonical: dict[str, str] = {"/": "/"}

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
            return None, "missing"
        if not st.is_regular:
            return None, "not a regular file"
        if st.size > max_bytes:
            return None, f"larger than {max_bytes} bytes ({st.size})"
        got = self._member(path, max_bytes)
        if got is None or not got[0].isreg() or got[0].size > max_bytes:
            return None, "changed while being read"
        return got[1], None

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
        st = self.stat(real)
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
            st = self.stat(current)
            if st is None or not st.is_symlink:
                break
            target = self.readlink(current)
            if not target:
                break
            current = self.canonical(posixpath.join(posixpath.dirname(current), target))
        return seen
