"""A CLI-like writer for the browser benchmark: small transactions through `Store`, one after another, until
stopped. Each commits one short eval trajectory (3 steps) and a review of a benchmark runbook, so the data the
pages show keeps changing. Prints the number of commits after each one.

    python -m benchmarks.ui_writer DB [--pause SECONDS]
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

from rsr_core.models import Review, Step, Trajectory
from rsr_core.store import Store, pipeline


def one_trajectory(n: int) -> Trajectory:
    """A small eval run with a command."""
    return Trajectory(
        trajectory_id=f"writer-{os.getpid()}-{n}",
        task_id="writer-task",
        kind="eval",
        harness="terminus-2",
        content_hash=f"writer-{os.getpid()}-{n}",
        reward=float(n % 2),
        steps=[
            Step(index=1, source="user", message="count the lines of /app/data.txt"),
            Step(index=2, source="agent", analysis="a", plan="p", observation="42 /app/data.txt"),
            Step(index=3, source="agent", analysis="done", plan="claim", task_complete=True),
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("db")
    parser.add_argument("--pause", type=float, default=0.25, help="seconds between transactions")
    args = parser.parse_args()
    store = Store(args.db, wait_s=600)
    for n in itertools.count(1):
        with store.transaction() as cur:
            store.write_trajectories([one_trajectory(n)], cur)
            pipeline.insert_review(
                cur, Review(runbook_id=f"rb-bench-{n % 2000:05d}", decision="approve", reviewer="writer")
            )
        print(f"{n} commits at {time.time():.1f}", flush=True)
        time.sleep(args.pause)


if __name__ == "__main__":
    main()
