"""The DuckDB store: connection ownership, migrations and bulk writes through Arrow."""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import duckdb

from rsr_core.errors import RsrError
from rsr_core.models import Task, Trajectory
from rsr_core.store import queries
from rsr_core.store.host import Attachment, attach
from rsr_core.store.migrations import LATEST_VERSION, MIGRATIONS
from rsr_core.store.sql import one, registered, scalar

if TYPE_CHECKING:
    import pyarrow as pa


class StoreBusyError(RsrError):
    """The database file is locked by another process (DuckDB allows one writer)."""

    def __init__(self, message: str, pid: int | None = None):
        super().__init__(message)
        self.pid = pid


class StorePathError(RsrError):
    """The database path names something that is not a DuckDB file (a device, a directory, another file)."""

    exit_status = 1


class StoreVersionError(RsrError):
    """The database was written by a newer RSR Studio than this one."""


class StoreForeignError(StorePathError):
    """The path names a DuckDB database of another application (tables of its own, no migrations of ours):
    refused before anything is written into it."""


class StoreDamagedError(RsrError):
    """The DuckDB file is truncated or corrupt (DuckDB cannot read its blocks)."""


# What DuckDB says when the file's blocks cannot be read back: a checksum that does not match, a file shorter than
# its own header says, an instance invalidated by such a read. Any query may be the first to touch a bad block.
_DAMAGE_MARKERS = ("corrupt database file", "could not read enough bytes", "database has been invalidated")
_DUCKDB_MAGIC = (8, b"DUCK")  # offset and bytes of the magic in a DuckDB file's first header


def _damage(exc: BaseException) -> str | None:
    """DuckDB's message when `exc` says the file is damaged, else None."""
    if not isinstance(exc, duckdb.Error) or isinstance(exc, duckdb.InterruptException):
        return None
    text = str(exc)
    return text if any(marker in text.lower() for marker in _DAMAGE_MARKERS) else None


def _interrupt(exc: BaseException) -> bool:
    """Is `exc` DuckDB's report of a signal that landed during a query? DuckDB cancels the query and raises its
    own exception in place of the KeyboardInterrupt (or the CLI's termination): a RuntimeError "Query
    interrupted" or an `InterruptException`, which code that reports failures one by one (an ingest's files)
    would take for a failure of its work. It is raised again as the KeyboardInterrupt it was."""
    return isinstance(exc, duckdb.InterruptException) or (
        isinstance(exc, RuntimeError) and "query interrupted" in str(exc).lower()
    )


def _damaged(path: str, detail: str) -> StoreDamagedError:
    return StoreDamagedError(
        f"{path}: is a damaged DuckDB database (truncated or corrupt: {detail[:200]}); restore it from a copy or "
        "pass another --db"
    )


def _is_duckdb_file(path: str) -> bool:
    offset, magic = _DUCKDB_MAGIC
    try:
        with open(path, "rb") as handle:
            return handle.read(offset + len(magic))[offset:] == magic
    except OSError:
        return False


_LOCK_PID = re.compile(r"PID (\d+)")


def _holder(message: str) -> str:
    match = _LOCK_PID.search(message)
    if not match:
        return "another process"
    pid = match.group(1)
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    return f"PID {pid}" + (f" ({cmd[:120]})" if cmd else "")


def connect(path: str | os.PathLike[str], read_only: bool = False) -> Attachment:
    """Open a DuckDB file (attach it to the process's DuckDB instance, `host.py`), turning DuckDB's lock error
    into a clear `StoreBusyError`. `cursor()` reads and writes it, `close()` lets it go."""
    path = str(path)
    if path == ":memory:":
        raise ValueError("an in-memory database is Store(':memory:'), not a file to attach")
    _check_path(path, read_only)
    try:
        return attach(path, read_only)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            pid = _LOCK_PID.search(str(exc))
            raise StoreBusyError(
                f"database {path} is in use by {_holder(str(exc))}; "
                "DuckDB allows one writer: stop that process or pass another --db",
                int(pid.group(1)) if pid else None,
            ) from exc
        # DuckDB's own header but a file that cannot be read: cut short, or overwritten
        if _damage(exc) is not None or _is_duckdb_file(path):
            raise _damaged(path, str(exc)) from None
        raise StorePathError(f"{path}: cannot be opened as a database: {str(exc)[:300]}") from None
    except duckdb.Error as exc:
        if _damage(exc) is not None:  # a block of the catalog fails its checksum
            raise _damaged(path, str(exc)) from None
        raise


def _check_path(path: str, read_only: bool) -> None:
    """Refuse a database path that is not a regular file or a new one (DuckDB would write its header into a
    device, as root a disk)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if not read_only:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorePathError(f"{path}: cannot create {Path(path).parent}: {exc.strerror}") from None
        return
    except OSError as exc:
        raise StorePathError(f"{path}: cannot be used as a database: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        what = (
            "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, fifo or socket)"
        )
        raise StorePathError(f"{path}: is {what}; a database is a DuckDB file (not opened)")


FOREIGN_TABLES_SHOWN = 8


def _foreign(path: str, tables: list[str]) -> str:
    shown = ", ".join(tables[:FOREIGN_TABLES_SHOWN])
    more = f", … ({len(tables)} in all)" if len(tables) > FOREIGN_TABLES_SHOWN else ""
    return (
        f"{path}: is a DuckDB database but not RSR Studio's: it holds tables {shown}{more} and no "
        "schema_migrations of ours; "
        "nothing was written to it (pass another --db, or a new path)"
    )


DEFAULT_WAIT_S = 30.0
Waiting = Callable[[str], None]


def _arrow() -> ModuleType:
    """The Arrow side of the store (`arrow_rows`), loaded by the first write: a command that only reads never
    needs Arrow, and loading it is a good part of a short command's start."""
    from rsr_core.store import arrow_rows

    return arrow_rows


class Store:
    """All reads and writes of RSR Studio's data.

    Accepts a path, ":memory:" or an open DuckDB connection, so tests use the real engine.

    A database file is never held between uses: `reading()` (a page's or a command's reads) and `transaction()`
    open it, and it is closed again as soon as no one in this process uses it, so the app, any number of `rsr`
    commands and job drivers share one file. DuckDB lets one process open a file at a time; a process that finds
    it open elsewhere waits (up to `wait_s`, reporting the wait once through `on_wait`) and then fails with a
    `StoreBusyError` naming the holder. `:memory:` and passed-in connections are kept open (nothing to share).
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | duckdb.DuckDBPyConnection,
        read_only: bool = False,
        wait_s: float = DEFAULT_WAIT_S,
        on_wait: Waiting | None = None,
    ):
        self._pinned: duckdb.DuckDBPyConnection | None = None
        if isinstance(target, duckdb.DuckDBPyConnection):
            self._pinned = target
            self.path = ":connection:"
        elif str(target) == ":memory:":
            self._pinned = duckdb.connect(":memory:")
            self.path = ":memory:"
        else:
            self.path = str(target)
        self.read_only = read_only
        self.wait_s = wait_s
        self.on_wait = on_wait
        self._con: Attachment | None = None
        self._users = 0
        self._held: list[duckdb.DuckDBPyConnection] = []
        self._lock = threading.RLock()
        self._local = threading.local()
        self._write_lock = threading.RLock()
        if read_only:
            self._check_version()
        else:
            self.migrate()

    # -- connection -----------------------------------------------------------------------------
    def _open(self) -> Attachment:
        deadline = time.monotonic() + self.wait_s
        delay, told = 0.01, False
        while True:
            try:
                return connect(self.path, read_only=self.read_only)
            except StoreBusyError as busy:
                if time.monotonic() >= deadline:
                    raise StoreBusyError(f"{busy} (waited {self.wait_s:g} s)", busy.pid) from None
                if not told and self.on_wait is not None:
                    self.on_wait(f"waiting for {self.path}: {busy}")
                    told = True
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def _acquire(self) -> duckdb.DuckDBPyConnection | Attachment:
        with self._lock:
            if self._pinned is not None:
                return self._pinned
            if self._con is None:
                self._con = self._open()
            self._users += 1
            return self._con

    def _release(self) -> None:
        with self._lock:
            if self._pinned is not None:
                return
            self._users -= 1
            if self._users == 0 and self._con is not None:
                self._con.close()
                self._con = None

    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of this thread's own for a group of reads; the file is let go afterwards (when no one else in
        this process uses it)."""
        local = getattr(self._local, "cur", None)
        if local is not None:  # nested inside this thread's reading() or transaction(): share it
            yield local
            return
        con = self._acquire()
        try:
            cur = con.cursor()
            self._local.cur = cur
            try:
                yield cur
            except Exception as exc:
                if _interrupt(exc):
                    raise KeyboardInterrupt from exc
                detail = _damage(exc)
                if detail is None:
                    raise
                raise _damaged(self.path, detail) from None
            finally:
                self._local.cur = None
                cur.close()
        finally:
            self._release()

    @contextmanager
    def engine_threads(self, threads: int) -> Iterator[None]:
        """DuckDB's threads in this process set to `threads` within the block, then back to what they were.
        A writer beside processes that take every core gains nothing from more threads and pays for their
        switching (benchmarks/RESULTS.md). The setting is the process's: other uses meanwhile have it too."""
        with self.reading() as cur:
            before = int(scalar(cur, "SELECT current_setting('threads')"))
            cur.execute(f"SET threads = {int(threads)}")
        try:
            yield
        finally:
            with suppress(duckdb.Error), self.reading() as cur:  # (not over what went wrong in the block)
                cur.execute(f"SET threads = {before}")

    @contextmanager
    def kept_open(self) -> Iterator[None]:
        """Keep the file open across the uses within this block: each use that is the last lets the file go,
        and letting it go writes everything since the last time into the file (a checkpoint), which a writer
        of many batches would otherwise pay once a batch. Other processes wait meanwhile: hold it briefly."""
        self._acquire()
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One write transaction; rolled back whole on any error."""
        with self._write_lock, self.reading() as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            except BaseException:
                # a damaged or invalidated database refuses even this: what went wrong first says more
                with suppress(duckdb.Error):
                    cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """No other thread of this process writes within this block (this thread's transactions may)."""
        with self._write_lock:
            yield

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor that keeps the database open until `close()` (tests and one-shot scripts; commands and pages
        use `reading()` so that the file is not held)."""
        with self._lock:
            cur = self._acquire().cursor()
            self._held.append(cur)
            return cur

    def close(self) -> None:
        """Let go of everything this object holds (cursors from `cursor()`; an in-memory database is dropped)."""
        with self._lock:
            held, self._held = self._held, []
            for cur in held:
                cur.close()
                self._release()
            if self._pinned is not None and self.path == ":memory:":
                self._pinned.close()

    def schema_version(self) -> int:
        """Latest applied migration (0 for an empty database); a database of another application (tables of
        its own and no migrations of ours) is a `StoreForeignError`, so that nothing is written into it."""
        with self.reading() as cur:
            tables = [
                name if schema == "main" else f"{schema}.{name}"
                for schema, name in cur.execute(
                    "SELECT table_schema, table_name FROM information_schema.tables "
                    "WHERE table_catalog = current_database() "  # other files may be attached beside this one
                    "ORDER BY table_schema <> 'main', table_schema, table_name"
                ).fetchall()
            ]
            if not tables:
                return 0
            if "schema_migrations" in tables and self._our_migrations(cur):
                return scalar(cur, "SELECT coalesce(max(version), 0) FROM schema_migrations")
        raise StoreForeignError(_foreign(self.path, tables))

    @staticmethod
    def _our_migrations(cur: duckdb.DuckDBPyConnection) -> bool:
        """Is `schema_migrations` ours? Its first migration is recorded under our name (another application's
        table of that name has other columns, or other names)."""
        try:
            row = one(cur, "SELECT name FROM schema_migrations WHERE version = 1")
        except duckdb.Error as exc:
            if _damage(exc) is not None or isinstance(exc, duckdb.InterruptException):
                raise
            return False  # no such columns: someone else's table
        return row is not None and row[0] == MIGRATIONS[0][1]

    def _check_version(self) -> int:
        version = self.schema_version()
        if version > LATEST_VERSION:
            raise StoreVersionError(
                f"{self.path} has schema version {version}; this RSR Studio knows up to {LATEST_VERSION}"
            )
        return version

    def migrate(self) -> int:
        """Apply pending migrations in order (a database that is up to date is only read); returns the version."""
        if self._check_version() == LATEST_VERSION:
            return LATEST_VERSION
        with self.transaction() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMP DEFAULT current_timestamp)"
            )
            current = scalar(cur, "SELECT coalesce(max(version), 0) FROM schema_migrations")
            for version, name, sql in MIGRATIONS:
                if version > current:
                    cur.execute(sql)
                    cur.execute("INSERT INTO schema_migrations(version, name) VALUES (?, ?)", [version, name])
        return LATEST_VERSION

    # -- writes ---------------------------------------------------------------------------------
    def _insert(self, cur: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> None:
        if data.num_rows == 0:
            return
        cols = ", ".join(data.column_names)
        with registered(cur, f"_arrow_{table}", data) as name:
            cur.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}")

    def existing_hashes(self, trajectory_ids: Iterable[str]) -> dict[str, str]:
        """Content hashes of the given ids that are already stored."""
        ids = list(set(trajectory_ids))
        if not ids:
            return {}
        table = _arrow().id_table("trajectory_id", ids)
        with self.reading() as cur, registered(cur, "_ids", table):
            rows = cur.execute(
                "SELECT t.trajectory_id, t.content_hash FROM trajectories t JOIN _ids USING (trajectory_id)"
            ).fetchall()
        return dict(rows)

    def known_task_ids(self, task_ids: Iterable[str]) -> set[str]:
        """Which of these task ids are already stored."""
        ids = list({t for t in task_ids if t})
        if not ids:
            return set()
        with (
            self.reading() as cur,
            registered(cur, "_tids", _arrow().id_table("task_id", ids)),
        ):
            rows = cur.execute("SELECT task_id FROM tasks JOIN _tids USING (task_id)").fetchall()
        return {r[0] for r in rows}

    def write_trajectories(
        self, trajectories: list[Trajectory], cur: duckdb.DuckDBPyConnection | None = None
    ) -> int:
        """Store whole trajectories (steps, actions, commands, search terms) in one transaction.

        Tasks they name but that are unknown are added with what is known. Returns tasks added.
        """
        if not trajectories:
            return 0
        return self.write_tables(_arrow().trajectory_tables(trajectories), trajectories, cur)

    def write_tables(
        self,
        tables: dict[str, pa.Table],
        trajectories: list[Trajectory],
        cur: duckdb.DuckDBPyConnection | None = None,
    ) -> int:
        """Store rows already built by `arrow_rows.trajectory_tables` (e.g. in ingest's parser processes),
        search terms included.

        `trajectories` are the same trajectories (their steps may be left out): they name the tasks to add
        as stubs when unknown. One transaction; returns tasks added.
        """
        if cur is None:
            with self.transaction() as tx:
                return self.write_tables(tables, trajectories, tx)
        new_tasks = self._task_stubs(trajectories)
        for name in _arrow().TABLE_SCHEMAS:
            self._insert(cur, name, tables[name])
        self._insert(cur, "tasks", new_tasks)
        return new_tasks.num_rows

    def _task_stubs(self, trajectories: list[Trajectory]) -> pa.Table:
        wanted: dict[str, str | None] = {}
        for traj in trajectories:
            if traj.task_id and traj.task_id not in wanted:
                wanted[traj.task_id] = traj.instruction
        if not wanted:
            return _arrow().task_table([])
        known = self.known_task_ids(wanted)
        stubs = [Task(task_id=t, instruction=ins) for t, ins in wanted.items() if t not in known]
        return _arrow().task_table(stubs)

    def write_task(self, task: Task, content_hash: str) -> str:
        """Store or refresh a task directory's data; returns 'added', 'updated' or 'unchanged'.

        A task first known only from trajectories is filled in when its directory is ingested.
        """
        with self.transaction() as cur:
            return self.write_tasks([(task, content_hash)], cur)[0]

    def write_tasks(self, tasks: list[tuple[Task, str]], cur: duckdb.DuckDBPyConnection) -> list[str]:
        """`write_task` of several task directories (each with its content hash) in the caller's transaction,
        one query per table whatever their number; the status of each, in order. A task named twice is
        stored as its last copy."""
        ids = list(dict.fromkeys(task.task_id for task, _ in tasks))
        with registered(cur, "_write_task_ids", _arrow().id_table("task_id", ids)) as name:
            stored = dict(
                cur.execute(f"SELECT task_id, content_hash FROM tasks JOIN {name} USING (task_id)").fetchall()
            )
        statuses: list[str] = []
        changed: dict[str, tuple[Task, str]] = {}
        for task, content_hash in tasks:
            if task.task_id in changed:
                statuses.append("unchanged" if changed[task.task_id][1] == content_hash else "updated")
            elif task.task_id in stored and stored[task.task_id] == content_hash:
                statuses.append("unchanged")
                continue
            else:
                statuses.append("updated" if task.task_id in stored else "added")
            changed[task.task_id] = (task, content_hash)
        if not changed:
            return statuses
        gone = _arrow().id_table("task_id", list(changed))
        with registered(cur, "_changed_task_ids", gone) as name:
            cur.execute(f"DELETE FROM tasks WHERE task_id IN (SELECT task_id FROM {name})")
            cur.execute(f"DELETE FROM task_files WHERE task_id IN (SELECT task_id FROM {name})")
        tasks_rows, files_rows = _arrow().tasks_tables(list(changed.values()))
        self._insert(cur, "tasks", tasks_rows)
        self._insert(cur, "task_files", files_rows)
        return statuses

    # -- reads (SQL lives in queries.py) --------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """Counts of tasks, trajectories by kind, steps and commands."""
        with self.reading() as cur:
            return queries.summary(cur)

    def coverage(self) -> dict[str, Any]:
        """Tasks attempted / solved / uniquely solved per harness, union and gain over the best."""
        with self.reading() as cur:
            return queries.coverage(cur)

    def list_trajectories(
        self, f: queries.TrajectoryFilter | None = None, limit: int = 50, offset: int = 0
    ) -> list[dict[str, Any]]:
        """One page of the trajectory list."""
        with self.reading() as cur:
            return queries.list_trajectories(cur, f or queries.TrajectoryFilter(), limit, offset)

    def count_trajectories(self, f: queries.TrajectoryFilter | None = None) -> int:
        """Size of the filtered trajectory list."""
        with self.reading() as cur:
            return queries.count_trajectories(cur, f or queries.TrajectoryFilter())

    def get_trajectory(
        self, trajectory_id: str, step_from: int = 1, step_to: int | None = None
    ) -> Trajectory | None:
        """A trajectory with (a range of) its steps."""
        with self.reading() as cur:
            return queries.get_trajectory(cur, trajectory_id, step_from, step_to)

    def commands(self, trajectory_id: str) -> list[str]:
        """Normalised commands of a trajectory, in order."""
        with self.reading() as cur:
            return queries.commands_of_trajectory(cur, trajectory_id)

    def get_task(self, task_id: str, with_hidden: bool = False) -> Task | None:
        """A task (hidden files only on request)."""
        with self.reading() as cur:
            return queries.get_task(cur, task_id, with_hidden)
