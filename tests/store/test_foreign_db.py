"""A database file that is not RSR Studio's, or is damaged, is refused with one line; nothing is written to it."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from rsr_core.models import Step, Trajectory
from rsr_core.store import Store, StoreDamagedError, StoreForeignError
from rsr_core.store.migrations import LATEST_VERSION
from tests.export.corpus import add_rewrite

RSR = [sys.executable, "-m", "rsr_core.cli"]


def _duckdb_file(path: Path, *statements: str) -> Path:
    con = duckdb.connect(str(path))
    for sql in statements:
        con.execute(sql)
    con.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rsr(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RSR, *args], capture_output=True, text=True, timeout=120)


FOREIGN = {
    "own tables": (
        "CREATE TABLE customers (id INTEGER, name VARCHAR)",
        "INSERT INTO customers VALUES (1, 'a')",
        "CREATE VIEW recent AS SELECT * FROM customers",
        "CREATE SCHEMA billing",
        "CREATE TABLE billing.invoices (id INTEGER)",
    ),
    # Seen: a table named like one of ours ended `rsr list` with a CatalogException traceback.
    "a table named like ours": ("CREATE TABLE trajectories (x INTEGER)",),
    # Another application's migrations table (Rails keeps versions as strings).
    "someone else's schema_migrations": (
        "CREATE TABLE schema_migrations (version VARCHAR)",
        "INSERT INTO schema_migrations VALUES ('20240101000000')",
    ),
    "schema_migrations with other names": (
        "CREATE TABLE schema_migrations (version INTEGER, name VARCHAR)",
        "INSERT INTO schema_migrations VALUES (1, 'create users')",
    ),
}
FOUND = {
    "own tables": "customers, recent, billing.invoices",
    "a table named like ours": "trajectories",
    "someone else's schema_migrations": "schema_migrations",
    "schema_migrations with other names": "schema_migrations",
}


@pytest.mark.parametrize("kind", list(FOREIGN))
def test_another_applications_database_is_refused_before_anything_is_written(tmp_path, kind):
    # Seen: even `rsr list --db other.duckdb` created every table of ours inside the other application's file.
    db = _duckdb_file(tmp_path / "other.duckdb", *FOREIGN[kind])
    before = _digest(db)
    done = _rsr("list", "--db", str(db))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [
        f"rsr: {db}: is a DuckDB database but not RSR Studio's: it holds tables {FOUND[kind]} and no "
        "schema_migrations of ours; nothing was written to it (pass another --db, or a new path)"
    ]
    assert _digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.duckdb"]  # no write-ahead log either


@pytest.mark.parametrize("read_only", [False, True])
def test_the_store_refuses_it_for_readers_and_writers(tmp_path, read_only):
    db = _duckdb_file(tmp_path / "other.duckdb", *FOREIGN["own tables"])
    before = _digest(db)
    with pytest.raises(StoreForeignError, match=r"holds tables customers, recent, billing\.invoices and no"):
        Store(db, read_only=read_only)
    assert _digest(db) == before
    con = duckdb.connect(str(db), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"customers", "recent", "invoices"}


def test_many_tables_are_named_up_to_a_few(tmp_path):
    db = _duckdb_file(tmp_path / "wide.duckdb", *[f"CREATE TABLE t{i:02d} (x INTEGER)" for i in range(12)])
    with pytest.raises(StoreForeignError) as caught:
        Store(db)
    assert "holds tables t00, t01, t02, t03, t04, t05, t06, t07, … (12 in all) and no" in str(caught.value)


def test_an_empty_duckdb_file_and_a_new_path_are_migrated(tmp_path):
    empty = _duckdb_file(tmp_path / "empty.duckdb")
    for path in (empty, tmp_path / "new" / "new.duckdb"):
        done = _rsr("list", "--db", str(path))
        assert (done.returncode, done.stdout, done.stderr) == (0, "no trajectories\n", "")
        assert Store(path, read_only=True).schema_version() == LATEST_VERSION


def test_our_database_with_a_table_added_by_hand_is_still_ours(tmp_path):
    db = tmp_path / "ours.duckdb"
    store = Store(db)
    add_rewrite(store, "rw-a", 1.0, False, [], variant="a")
    store.close()
    _duckdb_file(db, "CREATE TABLE my_notes (note VARCHAR)")
    done = _rsr("list", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    assert '"total": 1' in done.stdout


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> Path:
    """A database of ours with enough rows that its tables span many blocks."""
    db = tmp_path_factory.mktemp("ours") / "ours.duckdb"
    store = Store(db)
    for i in range(40):
        add_rewrite(store, f"rw-{i}", 1.0, False, [], variant=str(i))
    # and one long run: its steps alone fill several of DuckDB's 256 KiB blocks
    steps = [Step(index=i, source="user", message=f"{i} " + "x" * 2000) for i in range(1, 1500)]
    store.write_trajectories(
        [Trajectory(trajectory_id="long", task_id="t", harness="terminus-2", content_hash="l", steps=steps)]
    )
    store.close()
    return db


def _damage(source: Path, target: Path, how: str) -> Path:
    shutil.copy(source, target)
    size = target.stat().st_size
    if how.startswith("truncated"):
        with target.open("r+b") as handle:
            handle.truncate({"truncated in a header": 6000, "truncated": size // 2}[how])
    else:  # bytes of the first block after the headers overwritten: its checksum no longer matches
        with target.open("r+b") as handle:
            handle.seek(12288 + 200)
            data = handle.read(64)
            handle.seek(12288 + 200)
            handle.write(bytes(b ^ 0xFF for b in data))
    return target


@pytest.mark.parametrize("how", ["truncated in a header", "truncated", "corrupt block"])
@pytest.mark.parametrize("command", [["list"], ["stats", "summary"], ["export", "--format", "sft-jsonl"]])
def test_a_damaged_database_is_one_line_naming_the_file_not_a_bug_report(ours, tmp_path, how, command):
    db = _damage(ours, tmp_path / "damaged.duckdb", how)
    extra = ["--out", str(tmp_path / "out.jsonl")] if command[0] == "export" else []
    done = _rsr(*command, *extra, "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "bug in RSR Studio" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"rsr: {db}: is a damaged DuckDB database (truncated or corrupt: ")
    assert line.endswith("); restore it from a copy or pass another --db")
    assert not (tmp_path / "out.jsonl").exists()


def test_damage_found_by_a_later_query_is_the_same_error(ours, tmp_path):
    """A block can pass every check when the file is opened and fail only when a query reads it."""
    db = tmp_path / "late.duckdb"
    shutil.copy(ours, db)
    store = Store(db)
    with store.reading() as cur:
        # A block of the steps' data that holds none of the catalog (DuckDB lays the file out as it goes: the
        # catalog may share the first blocks with a small table's data).
        where = cur.execute(
            "SELECT block_id FROM pragma_storage_info('steps') WHERE block_id >= 0 AND block_id NOT IN "
            "(SELECT block_id FROM pragma_metadata_info()) ORDER BY block_id DESC LIMIT 1"
        ).fetchone()
        block_size = cur.execute("SELECT block_size FROM pragma_database_size()").fetchone()
    store.close()
    assert where is not None and block_size is not None
    offset = 12288 + where[0] * block_size[0] + 64  # past the block's checksum
    with db.open("r+b") as handle:
        handle.seek(offset)
        data = handle.read(256)
        handle.seek(offset)
        handle.write(bytes(b ^ 0xFF for b in data))
    store = Store(db)  # the catalog is intact
    with pytest.raises(StoreDamagedError, match=r"late\.duckdb: is a damaged DuckDB database"):
        for row in store.list_trajectories(limit=100):
            store.get_trajectory(row["trajectory_id"])
    store.close()
