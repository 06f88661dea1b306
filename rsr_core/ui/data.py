"""Reads for the pages: results cached until the database changes, the file opened only on a cache miss.

The database file's identity and its write-ahead log's (size, mtime, inode) change with every committed
write, by this process or another, and only then (reads change neither): that signature keys the cache, so a
page rerun with nothing new touches no file at all, and a rerun after a CLI job's commit sees it at once.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from typing import Any, ParamSpec, TypeVar

import duckdb
import streamlit as st

from rsr_core.ui.context import AppServices

P = ParamSpec("P")
R = TypeVar("R")
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
    database, opened at the first miss and let go at the end: opening the file costs tens of ms at paper
    scale, and after another process's commit every read of a page misses."""
    _RUN.stack = ExitStack()
    try:
        yield
    finally:
        stack, _RUN.stack = _RUN.stack, None
        stack.close()


def _cursor(db_path: str) -> Any:
    from rsr_core.ui.widgets import services_for

    store = services_for(db_path).store
    stack = getattr(_RUN, "stack", None)
    if stack is None:
        return store.reading()
    cur = getattr(_RUN, "cursors", {}).get(db_path) if getattr(_RUN, "owner", None) is stack else None
    if cur is None:
        cur = stack.enter_context(store.reading())
        _RUN.owner, _RUN.cursors = stack, {db_path: cur}
    return nullcontext(cur)


@st.cache_data(show_spinner=False, max_entries=1000)
def _run(name: str, db_path: str, signature: tuple, args: tuple, kwargs: dict[str, Any]) -> Any:
    with _cursor(db_path) as cur:
        return _QUERIES[name](cur, *args, **kwargs)


def cached(fn: Callable[..., R]) -> Callable[..., R]:
    """`fn(cur, *args)` -> `f(ctx, *args)`, cached per database state (arguments must be hashable values)."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    _QUERIES[name] = fn

    @functools.wraps(fn)
    def call(ctx: AppServices, *args: Any, **kwargs: Any) -> R:
        path = ctx.settings.db_path
        return _run(name, path, db_signature(path), args, kwargs)

    return call


def read(ctx: AppServices, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """One uncached read (`fn(cur, *args)`) in its own short use of the database."""
    with ctx.store.reading() as cur:
        return fn(cur, *args, **kwargs)


Cursor = duckdb.DuckDBPyConnection
