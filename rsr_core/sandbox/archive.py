"""Tar archives of files to copy into a sandbox (the engine unpacks them; no command runs inside)."""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath


def tar_files(files: Mapping[str, bytes | str], dest: str = "/", dirs: Sequence[str] = ()) -> bytes:
    """An uncompressed tar of `files` (relative path -> content) under `dest`, with every directory on the
    way and the extra absolute `dirs` as entries of their own; scripts (*.sh) are executable."""
    base = PurePosixPath(dest.strip("/") or ".")
    now = int(time.time())
    entries: dict[str, bytes | None] = {}
    for rel, content in files.items():
        path = base / PurePosixPath(rel)
        for parent in reversed(path.parents):
            if str(parent) != ".":
                entries.setdefault(str(parent), None)
        entries[str(path)] = content.encode() if isinstance(content, str) else content
    for extra in dirs:
        for part in [*reversed(PurePosixPath(extra.strip("/")).parents), PurePosixPath(extra.strip("/"))]:
            if str(part) != ".":
                entries.setdefault(str(part), None)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.mtime = now
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size = len(data)
                info.mode = 0o755 if name.endswith(".sh") else 0o644
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
