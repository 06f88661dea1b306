"""A unit's signature: what its files are on disk right now, taken before they are read.

An ingest stores, per unit it stored (or found stored already), the signature taken before its files were
read (rsr_core/store/ingest_signatures.py). The next ingest takes the signature again and skips the unit only
when it is the same and its trajectory is still stored: any write to a file changes its size, modification
time or at least its change time (which no one can set back), a file swapped for another (or for a link) is
another inode, and a file that appears or goes is seen as such. A change made while the files
were read shows in the next signature, so it is read again then.
"""

from __future__ import annotations

import hashlib
import os
import stat

from rsr_core.ingest.detect import TRIAL_FILES, Unit
from rsr_core.ingest.fs import real, real_below

SIGNED_KINDS = ("harbor_trial", "atif")
"""Units whose files are all known from their kind (a Terminal-Bench trial reads a varying set of episode
files, and a task directory is compared by its content hash): only these are signed."""


def _stat_text(path: str) -> str:
    """The state of one path: lstat's identity, size, times and mode, and the target's when it is a link."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "-"
    parts = [_fields(info)]
    if stat.S_ISLNK(info.st_mode):
        try:
            parts.append(_fields(os.stat(path)) + " " + os.readlink(path))
        except OSError:
            parts.append("dangling")
    return " ".join(parts)


def _fields(info: os.stat_result) -> str:
    return f"{info.st_dev}:{info.st_ino}:{info.st_mode}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def unit_paths(unit: Unit) -> list[str]:
    """Every path the unit's parse reads, or looks for (a file that appears, goes or is replaced by another
    or by a link changes its state here)."""
    base = str(unit.path)
    if unit.kind == "atif":
        return [base]
    return [os.path.join(base, name) for name in TRIAL_FILES["harbor_trial"]]


def signature(unit: Unit, harness: str | None, kind: str | None) -> str | None:
    """The unit's signature now (None: not a signed kind, or a path that cannot be looked at)."""
    if unit.kind not in SIGNED_KINDS:
        return None
    try:
        states = [_stat_text(p) for p in unit_paths(unit)]
    except OSError:
        return None
    text = "\n".join([unit.kind, str(unit.root), harness or "", kind or "", *states])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def unit_key(unit: Unit) -> str:
    """The path a unit is remembered by: resolved, so that it is found again from any working directory, and
    as text the store takes (bytes of a name that are not UTF-8 are written as escapes; two names that then
    read alike still differ in signature, which names the file's inode)."""
    where = real(unit.path) if unit.root is None else real_below(unit.path, unit.root)
    return os.fsencode(where).decode("utf-8", "backslashreplace")


def remembered(unit: Unit, harness: str | None, kind: str | None) -> tuple[str, str] | None:
    """(the path the unit is remembered by, its signature now), None when it is not signed."""
    signed = signature(unit, harness, kind)
    return None if signed is None else (unit_key(unit), signed)
