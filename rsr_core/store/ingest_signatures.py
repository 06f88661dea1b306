"""What `rsr ingest` remembers of the files it stored: per unit (a trial directory or an ATIF file, by its
resolved path) the signature of its files as they were when read, and the trajectory they became. An
unchanged unit is then known without being read again; any change to its files gives another signature."""

from __future__ import annotations

from collections.abc import Iterable

import duckdb
import pyarrow as pa

from rsr_core.store.sql import registered

_ROWS = pa.schema(
    [
        ("unit_path", pa.string()),
        ("signature", pa.string()),
        ("trajectory_id", pa.string()),
        ("content_hash", pa.string()),
    ]
)


def any_recorded(cur: duckdb.DuckDBPyConnection) -> bool:
    """Is any unit remembered?"""
    return cur.execute("SELECT 1 FROM ingest_signatures LIMIT 1").fetchone() is not None


def unchanged(cur: duckdb.DuckDBPyConnection, signatures: dict[str, str]) -> set[str]:
    """Of these unit paths (path -> signature now), those recorded with the same signature whose trajectory
    is still stored with the content it had."""
    if not signatures:
        return set()
    # Two list parameters, not an Arrow table: the first Arrow array a process builds from Python objects imports
    # pandas (pyarrow looks for its types), which a re-ingest that finds nothing new would wait for.
    rows = cur.execute(
        "SELECT s.unit_path FROM ingest_signatures s "
        "JOIN (SELECT unnest(?::VARCHAR[]) AS unit_path, unnest(?::VARCHAR[]) AS signature) n "
        "USING (unit_path, signature) "
        "JOIN trajectories t ON t.trajectory_id = s.trajectory_id AND t.content_hash = s.content_hash",
        [list(signatures), list(signatures.values())],
    ).fetchall()
    return {r[0] for r in rows}


def record(cur: duckdb.DuckDBPyConnection, rows: Iterable[tuple[str, str, str, str]]) -> None:
    """Remember (unit path, signature, trajectory id, content hash) rows, replacing a path's older row."""
    data = list(rows)
    if not data:
        return
    table = pa.Table.from_arrays(
        [pa.array(list(col), pa.string()) for col in zip(*data, strict=True)], schema=_ROWS
    )
    with registered(cur, "_new_signatures", table) as name:
        cur.execute(
            "INSERT OR REPLACE INTO ingest_signatures (unit_path, signature, trajectory_id, content_hash) "
            f"SELECT DISTINCT ON (unit_path) unit_path, signature, trajectory_id, content_hash FROM {name}"
        )
