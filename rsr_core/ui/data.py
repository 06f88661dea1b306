"""Reads for the pages: results cached until the database changes (`cached_by`: until what they read changes),
the file opened only on a cache miss.

The database file's identity and its write-ahead log's (size, mtime, inode) change with every committed
write, by this process or another, and only then (reads change neither): that signature keys the cache, so a
page rerun with nothing new touches no file at all, and a rerun after a CLI job's commit sees it at once.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import duckdb
import streamlit as st

from rsr_core.store.sql import checkpoint
from rsr_core.ui.context import AppServices, build_app_services

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
_LOG = logging.getLogger("rsr_core.ui")
_QUERIES: dict[str, Callable[..., Any]] = {}


def db_signature(path: str) -> tuple[tuple[int, int, int] | None, ...]:
    """What changes when a transaction commits: (mtime, size, inode) of the database file and its WAL."""
    out: list[tuple[int, int, int] | None] = []
    for name in (path, f"{path}.wal"):
        try:
            st_ = os.stat(name)
        except OSError:
            out.append(None)
            continue
        out.append((st_.st_mtime_ns, st_.st_size, st_.st_ino))
    return tuple(out)


_RUN = threading.local()


@contextmanager
def one_use_per_run() -> Iterator[None]:
    """Within this block (one script run of the app), the reads of every cache miss share one use of the
    database, opened at the first miss and let go at the end: opening the file (attaching it, `host.py`) and
    letting it go each cost time, and after another process's commit every read of a
    page misses."""
    _RUN.stack = ExitStack()
    try:
        yield
    finally:
        stack, _RUN.stack = _RUN.stack, None
        stack.close()


def _cursor(db_path: str) -> Any:
    store = services_for(db_path).store
    stack = getattr(_RUN, "stack", None)
    if stack is None:
        return store.reading()
    cur = getattr(_RUN, "cursors", {}).get(db_path) if getattr(_RUN, "owner", None) is stack else None
    if cur is None:
        cur = stack.enter_context(store.reading())
        _RUN.owner, _RUN.cursors = stack, {db_path: cur}
    return nullcontext(cur)


_PREFETCHING = threading.Lock()  # held by the one prefetch under way, and by a write in a run
PREFETCH_WAIT_S = 1.0
PREFETCH_DELAY_S = 0.3  # how long a prefetch waits after the run that asked for it


@dataclass
class Written:
    """A write in this run (`write_in_run`) and what it leaves the page's cached reads."""

    ctx: AppServices
    carried: list[tuple[Cached[Any], tuple[Any, ...], Any]] = field(default_factory=list)

    def transaction(self) -> AbstractContextManager[Cursor]:
        """The write: one transaction on the run's use of the file."""
        return self.ctx.store.transaction()

    def carry(self, read: Cached[R], *args: Any, value: R) -> None:
        """After the write, `read(ctx, *args)` gives `value` (the writer knows how its write changed it; a read
        called with keyword arguments is another key and is not carried)."""
        self.carried.append((read, args, value))

    def keep(self, read: Cached[R], *args: Any) -> R:
        """`read(ctx, *args)` as it is before the write, which does not change it (carried to after it)."""
        value = read(self.ctx, *args)
        self.carry(read, *args, value=value)
        return value


@contextmanager
def write_in_run(ctx: AppServices) -> Iterator[Written]:
    """A write on this run's use of the database, which the reads around it share (one opening of the file,
    not one for the write and one for the reads). Inside the block, cached reads give the state before the
    write, `transaction()` writes, and what the writer `carry`s or `keep`s is cached for the state after it, so
    the page reads only what the write changed and the writer could not work out: the file is held by this run
    (no other process opens it) and no other thread of the process writes meanwhile, so the file changes by this
    write alone.

    The write is checkpointed at once: closing the file at the end of the run would otherwise checkpoint it then
    and change the file's signature again, and the reads cached after the write would all miss on the next run.
    A checkpoint is refused while another thread of the process reads or writes the file, so a prefetch under
    way is waited for (briefly) and none starts meanwhile; a job's threads may still be in the way, and then
    closing the file checkpoints."""
    quiet = _PREFETCHING.acquire(timeout=PREFETCH_WAIT_S)
    path = ctx.settings.db_path
    try:
        with _cursor(path) as shared, ctx.store.exclusive():
            written = Written(ctx)
            yield written
            with contextlib.suppress(duckdb.Error):
                checkpoint(shared)
            after = db_signature(path)
            for read, args, value in written.carried:
                _run(read.name, path, after, args, {}, _value=value)
    finally:
        if quiet:
            _PREFETCHING.release()


def background_priority() -> None:
    """Lower this thread's CPU priority to the lowest (Linux schedules threads, and takes a thread id here): the
    browser and the server's own threads drawing pages on the same cores come first."""
    with contextlib.suppress(OSError):  # not permitted here: the thread runs at the server's priority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def prefetch(fn: Callable[..., Any], ctx: AppServices, *args: Any) -> None:
    """Fill the cache of the read `fn(ctx, *args)` (a `cached` function) in a background thread at the lowest
    priority, for what the next click will most likely show; one prefetch at a time in the process (one that
    finds another under way does nothing). It starts PREFETCH_DELAY_S after the run that asked for it, so that
    it does not share the cores with sending and drawing that run (the server's threads and the browser); a
    cached value makes it return at once."""

    def work() -> None:
        if not _PREFETCHING.acquire(blocking=False):
            return
        background_priority()
        try:
            fn(ctx, *args)
        except Exception:  # noqa: BLE001 - a guess that failed: the click reads it again and shows any error
            _LOG.debug("prefetch of %s failed", getattr(fn, "__name__", fn), exc_info=True)
        finally:
            _PREFETCHING.release()

    timer = threading.Timer(PREFETCH_DELAY_S, work)
    timer.name, timer.daemon = "prefetch", True
    timer.start()


_READ: Any = object()


@st.cache_data(show_spinner=False, max_entries=1000)
def _run(
    name: str, db_path: str, signature: tuple, args: tuple, kwargs: dict[str, Any], _value: Any = _READ
) -> Any:
    """The read `name` of the database in the state `signature`; `_value` (not part of the key: Streamlit
    leaves arguments named with a leading underscore out) is its result when a write worked it out."""
    if _value is not _READ:
        return _value
    with _cursor(db_path) as cur:
        return _QUERIES[name](cur, *args, **kwargs)


class Cached(Protocol[R_co]):
    """A read of the database cached per database state: `read(ctx, *args)`; `read.query(cur, *args)` is the
    read itself (uncached, on a cursor), `read.name` its key."""

    @property
    def name(self) -> str: ...

    @property
    def query(self) -> Callable[..., R_co]: ...

    def __call__(self, ctx: AppServices, *args: Any, **kwargs: Any) -> R_co: ...


def _register(fn: Callable[..., R], state: Callable[[AppServices, str], Any]) -> Cached[R]:
    name = f"{fn.__module__}.{fn.__qualname__}"
    _QUERIES[name] = fn

    @functools.wraps(fn)
    def call(ctx: AppServices, *args: Any, **kwargs: Any) -> R:
        path = ctx.settings.db_path
        return _run(name, path, state(ctx, path), args, kwargs)

    call.name, call.query = name, fn  # type: ignore[attr-defined]
    return cast(Cached[R], call)


def cached(fn: Callable[..., R]) -> Cached[R]:
    """`fn(cur, *args)` -> `f(ctx, *args)`, cached per database state (arguments must be hashable values)."""
    return _register(fn, lambda ctx, path: db_signature(path))


def cached_by(version: Cached[Any]) -> Callable[[Callable[..., R]], Cached[R]]:
    """`cached`, but keyed by what the read `version` gives (a small read, itself cached per database state)
    instead of by the database's state: for reads of data that most writes leave as it was (the stored
    similarity scores change with their refresh, not with a review or a job's progress), so that a write does
    not send every such read back to the file. `fn` must give the same result whenever `version` gives the
    same value."""

    def wrap(fn: Callable[..., R]) -> Cached[R]:
        return _register(fn, lambda ctx, path: ("version", version.name, version(ctx)))

    return wrap


Cursor = duckdb.DuckDBPyConnection


@st.cache_resource(show_spinner=False)
def _services(db_path: str | None) -> AppServices:
    return build_app_services(db_path)


def services_for(db_path: str) -> AppServices:
    """The process-wide services of a database (the store is opened per use, never held)."""
    return _services(db_path)
