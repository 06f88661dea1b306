"""Database files attached to one in-memory DuckDB instance of the process for as long as they are used.

Starting a DuckDB instance builds its catalog of built-in functions whatever the file: with a file opened and
closed for every page's reads, that is most of the cost of opening a database. Attaching the file to an instance
that is already running costs a fraction of it (figures in benchmarks/RESULTS.md), and
detaching it lets the file go (its lock, its memory, its write-ahead log checkpointed) as closing it would, so
other processes can open it between uses.

One instance serves the process (two instances holding one file would both write it: POSIX locks do not stop a
process locking a file twice), each file is attached once under an alias of its own, counted by its users, and
a cursor starts in its file's catalog. A forked child starts an instance of its own: the parent's threads do
not exist there.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field

import duckdb

from rsr_core.outputs import uninterrupted


@dataclass
class _Host:
    pid: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    con: duckdb.DuckDBPyConnection | None = None
    files: dict[str, Attachment] = field(default_factory=dict)
    aliases: itertools.count = field(default_factory=lambda: itertools.count(1))


_STATE = _Host(pid=0)
# A forked child's copy of its parent's instance: never closed there (its threads are not in the child, and
# closing it would crash the process).
_INHERITED: list[_Host] = []


def _host() -> _Host:
    global _STATE
    if _STATE.pid != os.getpid():  # first use, or a forked child: nothing of the parent's is usable here
        _INHERITED.append(_STATE)
        _STATE = _Host(pid=os.getpid())
    return _STATE


def _spill_directory() -> str:
    """Where DuckDB spills what does not fit in memory: an in-memory instance would use `.tmp` in the current
    directory (an instance opened on a file uses `<file>.tmp`); one directory per process in the system's."""
    return os.path.join(tempfile.gettempdir(), f"rsr-duckdb-{os.getuid()}-{os.getpid()}")


def remove_spill_directory() -> None:
    """Remove this process's spill directory (DuckDB removes it when the instance closes; a process ending on a
    signal does not close it)."""
    shutil.rmtree(_spill_directory(), ignore_errors=True)


def _host_config() -> dict[str, str | bool | int | float | list[str]]:
    """The instance's settings. Its allocator gives memory back once a task has used 16 MB: DuckDB's larger
    default suits an instance closed after every use, while one that lives as long as the process would keep
    what an ingest of large trajectories used, raising its peak memory above that of an instance per use."""
    return {
        "temp_directory": _spill_directory(),
        "allocator_flush_threshold": "16MB",
        "allocator_bulk_deallocation_flush_threshold": "16MB",
    }


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Attachment:
    """A database file attached to the process's instance: `cursor()` gives a connection of its own whose
    default catalog is this file; `close()` gives up one use, and the last detaches the file."""

    def __init__(self, host: _Host, path: str, alias: str, read_only: bool):
        self._host, self.path, self.alias, self.read_only = host, path, alias, read_only
        self.users = 0

    def cursor(self) -> duckdb.DuckDBPyConnection:
        with self._host.lock:
            assert self._host.con is not None and self.users > 0, "cursor of a detached database"
            cur = self._host.con.cursor()
        cur.execute(f'USE "{self.alias}"')
        return cur

    def close(self) -> None:
        with self._host.lock:
            self.users -= 1
            if self.users > 0:
                return
            assert self._host.con is not None
            # Not interrupted half way (a Ctrl-C in a DETACH can detach the file and raise, leaving it listed,
            # and every later use would fail); if refused, it stays listed for the next use.
            with uninterrupted():
                self._host.con.execute(f'DETACH "{self.alias}"')
                del self._host.files[self.path]


def attach(path: str, read_only: bool) -> Attachment:
    """Attach the DuckDB file at `path` (created when missing unless `read_only`), or take one more use of it
    when it is attached already. DuckDB's own errors pass through (a lock held by another process, not a
    DuckDB file); a file attached here with the other access mode is refused."""
    host = _host()
    key = os.path.abspath(path)  # the WAL sits beside the path as given, as with duckdb.connect
    with host.lock:
        found = host.files.get(key)
        if found is None:
            if host.con is None:
                host.con = duckdb.connect(":memory:", config=_host_config())
            alias = f"rsr_{next(host.aliases)}"
            mode = ", READ_ONLY" if read_only else ""
            with uninterrupted():  # attached and listed together
                host.con.execute(f'ATTACH {_quoted(key)} AS "{alias}" (TYPE DUCKDB{mode})')
                found = host.files[key] = Attachment(host, key, alias, read_only)
        elif found.read_only != read_only:
            have, want = ("read-only", "read-write") if found.read_only else ("read-write", "read-only")
            raise duckdb.ConnectionException(
                f"{path} is open {have} in this process; it cannot also be opened {want}"
            )
        found.users += 1
        return found


def attached() -> dict[str, int]:
    """Files attached in this process and their uses (for tests and diagnostics)."""
    host = _host()
    with host.lock:
        return {path: a.users for path, a in host.files.items()}
