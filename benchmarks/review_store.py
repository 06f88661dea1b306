"""The store's part of recording one review in the studio: the review written (`review_runbook`), the reviewed
round's queue row read back and put in place, the review progress read again (what
`record_reviews` of rsr_core/ui/runbook_views.py does in its one transaction), timed per review.

    .venv/bin/python benchmarks/review_store.py --db data/rsr.duckdb [--reviews 30] [--queue 2000]

A working copy of the database gets the browser benchmark's review queue (`ui_fixture.add_review_queue`: a
human-gated job of `--queue` rounds with flags and reviews); then pending rounds are approved and rejected in
turn, one transaction each, and the queue carried from review to review is checked equal to a fresh read.
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

from benchmarks.ui_fixture import add_review_queue
from rsr_core.models import Review
from rsr_core.store import Store, app_queries, pipeline


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--reviews", type=int, default=30)
    parser.add_argument("--queue", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "review.duckdb"
        shutil.copy(args.db, db)
        add_review_queue(db, args.queue)
        store = Store(db)
        with store.reading() as cur:
            rounds = app_queries.runbook_queue(cur)
        pending = list(rounds.loc[rounds["status"] == "pending_review", "runbook_id"])[: args.reviews]
        times = []
        for i, rid in enumerate(pending):
            review = Review(
                runbook_id=rid, decision="reject" if i % 2 else "approve", reviewer="bench", reason=""
            )
            start = time.perf_counter()
            with store.transaction() as cur:
                pipeline.review_runbook(cur, review)
                rounds = app_queries.queue_with_rows(rounds, app_queries.queue_rows(cur, [rid]))
                app_queries.review_progress(cur)
            times.append((time.perf_counter() - start) * 1000)
        with store.reading() as cur:
            assert rounds.equals(app_queries.runbook_queue(cur)), (
                "the carried queue differs from a fresh read"
            )
        store.close()
    times.sort()
    print(
        f"{len(times)} reviews on a queue of {len(rounds):,} rounds: median {statistics.median(times):.1f} ms, "
        f"p90 {times[int(0.9 * (len(times) - 1))]:.1f} ms, max {times[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
