"""Small helpers over DuckDB cursors (every result is fully fetched: DuckDB 2 keeps an unfinished result
open on the connection and refuses further work until it is consumed)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb


def one(cur: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> tuple | None:
    """The first row of a query, or None."""
    rows = cur.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def scalar(cur: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> Any:
    """The first column of the first row, or None."""
    row = one(cur, sql, params)
    return row[0] if row else None


def rows_as_dicts(res: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every row of an executed query as a dict keyed by its column names (as the SELECT names them)."""
    names = [d[0] for d in res.description or ()]
    return [dict(zip(names, r, strict=True)) for r in res.fetchall()]


def row_as_dict(res: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The first row of an executed query as a dict keyed by its column names, or None."""
    rows = rows_as_dicts(res)
    return rows[0] if rows else None


def sibling(cur: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Another cursor on `cur`'s database, in the same catalog (a new cursor starts in its instance's default
    catalog, and a store's file is attached beside it, `host.py`)."""
    catalog = str(scalar(cur, "SELECT current_database()"))
    other = cur.cursor()
    other.execute('USE "' + catalog.replace('"', '""') + '"')
    return other


@contextmanager
def registered(cur: duckdb.DuckDBPyConnection, name: str, table: Any) -> Iterator[str]:
    """Expose an Arrow table to SQL under `name` for the duration of the block.

    On error the registration is left for the caller's ROLLBACK to discard (DuckDB refuses to
    unregister inside an aborted transaction); the next registration under the same name replaces it.
    """
    cur.register(name, table)
    yield name
    cur.unregister(name)


def checkpoint(cur: duckdb.DuckDBPyConnection) -> None:
    """Write the database's WAL into its file now (DuckDB refuses while another cursor of the instance is in a
    transaction on it: raises duckdb.Error then)."""
    cur.execute("CHECKPOINT")
