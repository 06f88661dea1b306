"""One measurement per process (run by benchmarks/run.py): prints one JSON line with seconds and peak RSS.

python benchmarks/probes.py read_json JOBS_DIR DB
python benchmarks/probes.py ingest JOBS_DIR DB
python benchmarks/probes.py ingest_tasks TASKS_DIR DB
python benchmarks/probes.py queries DB
python benchmarks/probes.py similarity DB METRIC
python benchmarks/probes.py similarity_cli DB
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(ROOT))

from rsr_core.store import Store, TrajectoryFilter, analysis_queries  # noqa: E402


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident set size of this process (or of its waited-for children), in MB."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024


def read_json(jobs: str, db: str, variant: str = "sampled") -> dict:
    """DuckDB's own reader over the same trajectory files: one table of documents, one of steps.

    `sampled`: read_json's defaults (the schema comes from a sample of the files; fields absent from it,
    here the rewrites' `extra.rsr`, are not read). `union`: union_by_name, every file's fields.
    """
    import duckdb

    options = ", union_by_name = true" if variant == "union" else ""
    started = time.perf_counter()
    con = duckdb.connect(db)
    con.execute(
        f"CREATE TABLE raw AS SELECT * FROM read_json(?, format = 'auto'{options})",
        [f"{jobs}/*/*/agent/trajectory.json"],
    )
    con.execute("CREATE TABLE steps AS SELECT session_id, unnest(steps, recursive := true) FROM raw")
    steps = con.execute("SELECT count(*) FROM steps").fetchone()[0]
    columns = [r[0] for r in con.execute("DESCRIBE raw").fetchall()]
    con.close()
    return {
        "seconds": time.perf_counter() - started,
        "steps": steps,
        "columns": columns,
        "peak_rss_mb": peak_rss_mb(),
    }


def ingest(jobs: str, db: str) -> dict:
    """`rsr ingest` of the job dirs into a fresh database (the store's default parser processes)."""
    from rsr_core.ingest import runner

    started = time.perf_counter()
    store = Store(db)
    report = runner.ingest_paths(store, [jobs])
    seconds = time.perf_counter() - started
    summary = store.summary()
    store.close()
    assert not report.errors, report.errors[:3]
    return {
        "seconds": seconds,
        "trajectories": report.trajectories_added,
        "steps": summary["steps"],
        "commands": summary["commands"],
        "workers": min(4, os.cpu_count() or 1),  # ingest_paths' default
        "peak_rss_mb": max(peak_rss_mb(), peak_rss_mb(children=True)),
    }


def ingest_tasks(tasks: str, db: str) -> dict:
    """The harbor task dirs (categories for the per-category similarity charts)."""
    from rsr_core.ingest.runner import ingest_paths

    started = time.perf_counter()
    store = Store(db)
    report = ingest_paths(store, [tasks])
    store.close()
    return {"seconds": time.perf_counter() - started, "tasks": report.files}


def _median_ms(fn, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), max(times)


def queries(db: str) -> dict:
    """List pages (filters + full-text search + 50 rows) and the detail fetch of a 300-step trajectory."""
    store = Store(db, read_only=True)
    cur = store.cursor()
    task, category = cur.execute(
        "SELECT t.task_id, k.category FROM trajectories t JOIN tasks k USING (task_id) "
        "WHERE t.kind = 'rewrite' ORDER BY t.trajectory_id LIMIT 1"
    ).fetchone()
    filters = [
        TrajectoryFilter(kind="rewrite", min_reward=1.0, search="pytest"),
        TrajectoryFilter(harness="statem", search="traceback keyerror"),
        TrajectoryFilter(category=category, search="config"),
        TrajectoryFilter(task_id=task, search="sed"),
        TrajectoryFilter(kind="discovery", max_reward=0.0, search="/app/report"),
        TrajectoryFilter(search="invoice metrics"),
    ]
    list_times, count_times = [], []
    for f in filters:
        store.list_trajectories(f, limit=50)  # first run warms DuckDB's caches; the median is of the rest
        list_times.append(_median_ms(lambda f=f: store.list_trajectories(f, limit=50, offset=50), 7)[0])
        count_times.append(_median_ms(lambda f=f: store.count_trajectories(f), 5)[0])
    long_ids = [
        r[0]
        for r in cur.execute(
            "SELECT trajectory_id FROM trajectories WHERE n_steps >= 300 ORDER BY n_steps LIMIT 5"
        ).fetchall()
    ]
    n_steps = cur.execute(
        "SELECT n_steps FROM trajectories WHERE trajectory_id = ?", [long_ids[0]]
    ).fetchone()[0]
    detail = [_median_ms(lambda t=t: store.get_trajectory(t), 3)[0] for t in long_ids]
    store.close()
    shown = [", ".join(f"{k}={v!r}" for k, v in vars(f).items() if v is not None) for f in filters]
    return {
        "list_median_ms": statistics.median(list_times),
        "list_max_ms": max(list_times),
        "list_runs": len(filters),
        "count_median_ms": statistics.median(count_times),
        "detail_median_ms": statistics.median(detail),
        "detail_runs": len(detail),
        "detail_steps": n_steps,
        "filters": shown,
    }


def similarity(db: str, metric: str) -> dict:
    """Load the passed rewrites and their commands, score every same-task pair, summarise with CIs."""
    from rsr_core.analysis.similarity import score_pairs, summarise

    store = Store(db, read_only=True)
    cur = store.cursor()
    started = time.perf_counter()
    rewrites = analysis_queries.passed_rewrites(cur)
    commands = analysis_queries.passed_rewrite_commands(cur)
    loaded = time.perf_counter()
    pairs = score_pairs(rewrites, commands, [metric])
    scored = time.perf_counter()
    payload = summarise(pairs, metric)
    done = time.perf_counter()
    return {
        "metric": metric,
        "trajectories": len(rewrites),
        "commands": len(commands),
        "pairs": len(pairs),
        "load_s": loaded - started,
        "score_s": scored - loaded,
        "summary_s": done - scored,
        "same_mean": payload["same_runbook"]["mean"],
        "same_pairs": payload["same_runbook"]["pairs"],
        "cross_mean": payload["cross_runbook"]["mean"],
        "cross_pairs": payload["cross_runbook"]["pairs"],
        "peak_rss_mb": peak_rss_mb(),
    }


def similarity_cli(db: str) -> dict:
    """`rsr similarity --json` end to end."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "similarity", "--db", db, "--json"],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    return {"seconds": time.perf_counter() - started}


PROBES = {
    "read_json": read_json,
    "ingest": ingest,
    "ingest_tasks": ingest_tasks,
    "queries": queries,
    "similarity": similarity,
    "similarity_cli": similarity_cli,
}

if __name__ == "__main__":
    print(json.dumps(PROBES[sys.argv[1]](*sys.argv[2:])))
