"""The export preview (the count the Export page shows) at paper scale, from the stored training keys and
without them, in one run.

    .venv/bin/python benchmarks/export_count.py --db /path/paper.duckdb [--reps 3]

A working copy of the database is counted with three filter sets as stored (every row keyed when it was
written), then with its keys cleared, as a database stored before they existed reads: every row is built
from its trajectory when counted (what every count did before the keys). Last, the keys are filled in again
(`store_training_keys`, what the next `rsr ingest` or job does for such a database) and counted once more.
Each count is checked equal to the first.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsr_core.export import ExportFilters, preview
from rsr_core.export.training_keys import store_training_keys
from rsr_core.store import Store

FILTERS = {
    "training (default)": ExportFilters(),
    "without terminus-2 discovery": ExportFilters(include_direct_terminus=False),
    "archive (--all)": ExportFilters(all_trajectories=True),
}


def _timed(fn, reps: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rsr-export-count-") as tmp:
        db = Path(tmp) / "paper.duckdb"
        shutil.copy(args.db, db)
        store = Store(db)
        stored: dict[str, tuple[float, object]] = {}
        for name, f in FILTERS.items():
            stored[name] = _timed(lambda f=f: preview(store, f), args.reps)
            print(f"stored keys, {name}: {stored[name][0]:.3f} s", flush=True)
        with store.transaction() as cur:
            cur.execute(
                "UPDATE trajectories SET training_rule = NULL, training_key = NULL, training_why = NULL"
            )
        name = "training (default)"
        built, result = _timed(lambda: preview(store, FILTERS[name]), 1)
        assert result == stored[name][1], "the count without keys differs"
        print(f"keys cleared, every row built when counted, {name}: {built:.1f} s", flush=True)
        t0 = time.perf_counter()
        keyed = store_training_keys(store)
        backfill = time.perf_counter() - t0
        print(f"store_training_keys: {keyed} trajectories in {backfill:.1f} s", flush=True)
        again, result = _timed(lambda: preview(store, FILTERS[name]), args.reps)
        assert result == stored[name][1], "the count after keying differs"
        store.close()
    print("\n| count | seconds | × stored |\n| --- | ---: | ---: |")
    base = stored[name][0]
    for label, (secs, _) in stored.items():
        print(f"| stored keys: {label} | {secs:.3f} | |")
    print(f"| keys cleared: {name}, every row built | {built:.1f} | {built / base:.0f} |")
    print(f"| keys filled in again (`store_training_keys`, {keyed:,} trajectories) | {backfill:.1f} | |")
    print(f"| after that: {name} | {again:.3f} | {again / base:.2f} |")


if __name__ == "__main__":
    main()
