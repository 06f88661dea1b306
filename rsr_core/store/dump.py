"""Dumping and loading the rewrite pipeline's rows as JSON lines (how the demo corpus ships them)."""

from __future__ import annotations

from pathlib import Path

import duckdb

PIPELINE_TABLES = ("jobs", "work_units", "runbooks", "critic_flags", "reviews", "transfer_checks")


def dump_pipeline(cur: duckdb.DuckDBPyConnection, out_dir: Path, job_ids: list[str]) -> dict[str, int]:
    """Write the rows of these jobs (and everything hanging off them) to out_dir/<table>.jsonl."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ids = ", ".join(f"'{j}'" for j in job_ids if "'" not in j)
    selects = {
        "jobs": f"SELECT * FROM jobs WHERE job_id IN ({ids})",
        "work_units": f"SELECT * FROM work_units WHERE job_id IN ({ids})",
        "runbooks": f"SELECT * FROM runbooks WHERE job_id IN ({ids})",
        "critic_flags": f"SELECT * FROM critic_flags WHERE runbook_id IN "
        f"(SELECT runbook_id FROM runbooks WHERE job_id IN ({ids}))",
        "reviews": f"SELECT * FROM reviews WHERE runbook_id IN "
        f"(SELECT runbook_id FROM runbooks WHERE job_id IN ({ids})) ORDER BY seq",
        "transfer_checks": f"SELECT * FROM transfer_checks WHERE trajectory_id IN "
        f"(SELECT trajectory_id FROM trajectories WHERE job_id IN ({ids}))",
    }
    counts = {}
    for table, select in selects.items():
        path = out_dir / f"{table}.jsonl"
        cur.execute(f"COPY ({select}) TO '{path}' (FORMAT json)")
        counts[table] = len(path.read_text().splitlines())
    return counts


def load_pipeline(cur: duckdb.DuckDBPyConnection, in_dir: Path) -> dict[str, int]:
    """Insert dumped rows that are not present yet (loading twice adds nothing)."""
    keys = {
        "jobs": "job_id",
        "work_units": "unit_id",
        "runbooks": "runbook_id",
        "transfer_checks": "trajectory_id",
    }
    counts = {}
    for table in PIPELINE_TABLES:
        path = in_dir / f"{table}.jsonl"
        if not path.is_file() or not path.read_text().strip():
            continue
        cols = [r[0] for r in cur.execute(f"DESCRIBE {table}").fetchall()]
        columns = ", ".join(cols)
        source = f"read_json('{path}', format = 'newline_delimited', columns = {_column_types(cur, table)})"
        if table in keys:
            where = f"WHERE {keys[table]} NOT IN (SELECT {keys[table]} FROM {table})"
        elif table == "reviews":
            where = "WHERE NOT EXISTS (SELECT 1 FROM reviews r WHERE r.runbook_id = s.runbook_id AND r.seq = s.seq)"
        else:  # critic_flags: loaded with their runbook
            where = "WHERE runbook_id NOT IN (SELECT DISTINCT runbook_id FROM critic_flags)"
        before = cur.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        cur.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {source} s {where}")
        counts[table] = cur.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] - before
    if counts.get("reviews"):
        top = cur.execute("SELECT coalesce(max(seq), 0) + 1 FROM reviews").fetchall()[0][0]
        cur.execute("DROP SEQUENCE IF EXISTS review_seq")
        cur.execute(f"CREATE SEQUENCE review_seq START {top}")
    return counts


def _column_types(cur: duckdb.DuckDBPyConnection, table: str) -> str:
    cols = cur.execute(f"DESCRIBE {table}").fetchall()
    return (
        "{" + ", ".join(f"'{name}': '{'VARCHAR' if typ == 'JSON' else typ}'" for name, typ, *_ in cols) + "}"
    )
