"""`rsr ingest` of a paper-scale corpus against DuckDB's own JSON scan of the same files, and a re-ingest.

    python benchmarks/ingest_bench.py [--seeds 41,43] [--out DIR] [--rounds 1] [--write]

Generates each corpus (benchmarks/generate.py, `--out`/ingest-SEED) when missing, then, `--rounds` times in
alternation, each in a fresh process into a new database file:

- reference: DuckDB `read_json` of every `trajectory.json` + unnest of the steps into columns, stored in a
  new database file (what a database does with the same bytes, no checks);
- `rsr ingest JOBS` (the CLI, its default workers, the similarity refresh at its end included);
- `rsr ingest JOBS` again into the same database (nothing new: every trial is known);

then `rsr ingest TASKS` once (the task directories). Figures are ratios of runs made back to back, so a busy
machine slows both sides alike; a warm-up scan of the corpus first puts both on a warm page cache. With
`--write` the section "Ingest at paper scale" of RESULTS.md is rewritten (every other section is kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(ROOT))
from benchmarks.results import replace_sections  # noqa: E402

SECTION = "Ingest at paper scale"
RSR = [sys.executable, "-m", "rsr_core.cli"]  # the code of this tree (cwd is ROOT)


def reference(jobs: str, db: str) -> None:
    """DuckDB alone: parse every trajectory.json, unnest the steps into columns, store both tables."""
    import duckdb

    con = duckdb.connect(db)
    con.execute(
        "CREATE TABLE raw AS SELECT * FROM read_json(?, format = 'auto')",
        [f"{jobs}/*/*/agent/trajectory.json"],
    )
    con.execute("CREATE TABLE steps AS SELECT session_id, unnest(steps, recursive := true) FROM raw")
    con.close()


def timed(argv: list[str]) -> dict:
    """Run `argv` to the end: its wall seconds and the peak RSS of its largest process (the parser processes
    of `rsr ingest` are its children and are counted)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode not in (0, 1):  # 1: some files refused, said in the report
            raise RuntimeError(f"{argv[:3]} exited {proc.returncode}: {err.read().decode()[-2000:]}")
        return {
            "seconds": wall,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024,
            "stdout": out.read().decode(),
        }


def _fresh(path: Path) -> str:
    for p in (path, Path(f"{path}.wal")):
        p.unlink(missing_ok=True)
    return str(path)


def ensure_corpus(corpus: Path, seed: int) -> dict:
    """The corpus description, generating it first when missing or of another seed."""
    meta_path = corpus / "corpus.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else None
    if not meta or meta.get("seed") != seed or meta.get("scale") != 1.0:
        subprocess.run(
            [sys.executable, str(HERE / "generate.py"), "--out", str(corpus), "--seed", str(seed)],
            check=True,
            cwd=ROOT,
        )
        meta = json.loads(meta_path.read_text())
    for task in (corpus / "tasks").iterdir():
        # The generator writes no verifier script, and `rsr ingest` refuses a task without one: a stub.
        script = task / "tests" / "test.sh"
        if task.is_dir() and not script.exists():
            script.parent.mkdir(exist_ok=True)
            script.write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    return meta


def warm(corpus: Path) -> int:
    """Read every file of the corpus once (the page cache then holds it for both sides); returns bytes."""
    total = 0
    for path in corpus.rglob("*"):
        if path.is_file():
            total += len(path.read_bytes())
    return total


def measure(corpus: Path, work: Path, rounds: int) -> dict:
    """The alternating runs; medians and every run's figures."""
    jobs, tasks = str(corpus / "jobs"), str(corpus / "tasks")
    runs: dict[str, list[dict]] = {"reference": [], "ingest": [], "reingest": []}
    db = work / "ingest.duckdb"
    for _ in range(rounds):
        ref_db = _fresh(work / "reference.duckdb")
        runs["reference"].append(timed([sys.executable, __file__, "--reference", jobs, ref_db]))
        _fresh(work / "reference.duckdb")
        runs["ingest"].append(timed([*RSR, "ingest", jobs, "--db", _fresh(db), "--json"]))
        runs["reingest"].append(timed([*RSR, "ingest", jobs, "--db", str(db), "--json"]))
        print(
            " ".join(
                f"{k} {v[-1]['seconds']:.1f} s (cpu {v[-1]['cpu_seconds']:.1f} s)" for k, v in runs.items()
            ),
            file=sys.stderr,
            flush=True,
        )
    first, again = json.loads(runs["ingest"][-1]["stdout"]), json.loads(runs["reingest"][-1]["stdout"])
    task_run = timed([*RSR, "ingest", tasks, "--db", str(db), "--json"])
    task_report = json.loads(task_run["stdout"])
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    ratios = [i["seconds"] / r["seconds"] for i, r in zip(runs["ingest"], runs["reference"], strict=True)]
    again_ratios = [
        a["seconds"] / i["seconds"] for a, i in zip(runs["reingest"], runs["ingest"], strict=True)
    ]
    return {
        "runs": runs,
        "median": med,
        "ratio": statistics.median(ratios),
        "reingest_ratio": statistics.median(again_ratios),
        "first": first,
        "again": again,
        "tasks": task_report,
        "task_seconds": task_run["seconds"],
        "peak_rss_mb": {k: max(r["peak_rss_mb"] for r in v) for k, v in runs.items()},
        "cpu": {k: statistics.median(r["cpu_seconds"] for r in v) for k, v in runs.items()},
    }


def section(results: list[tuple[dict, dict, int]], command: str) -> str:
    """The RESULTS.md section: one column per corpus (its meta, its measurement, its bytes)."""
    import duckdb

    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"DuckDB {duckdb.__version__}"
    )

    def each(result: dict, key: str) -> str:
        runs = result["runs"][key]
        return f"{result['median'][key]:.1f} s [" + ", ".join(f"{r['seconds']:.1f}" for r in runs) + "]"

    def row(name: str, cell: Callable[[dict, dict, int], str]) -> str:
        return f"| {name} | " + " | ".join(cell(m, r, b) for m, r, b in results) + " |"

    rounds = len(results[0][1]["runs"]["ingest"])
    lines = [
        f"## {SECTION}",
        "",
        f"`{command}` — {machine}; {rounds} alternating round(s) per corpus, each run a fresh process into a new "
        "database file, warm page cache; medians, each run in brackets; a ratio is the median of the ratios of "
        "runs made back to back.",
        "",
        "| measurement | " + " | ".join(f"seed {m['seed']}" for m, _, _ in results) + " |",
        "| --- |" + " --- |" * len(results),
        row("corpus", lambda m, r, b: f"{m['discovery'] + m['rewrite']:,} trials, {m['steps']:,} agent steps, "
            f"{m['tasks']:,} task dirs, {b / 1e6:,.0f} MB"),
        row("DuckDB `read_json` + unnest of the steps + store (new file)",
            lambda m, r, b: f"{each(r, 'reference')}, peak RSS {r['peak_rss_mb']['reference']:,.0f} MB"),
        row("`rsr ingest JOBS` (new file, similarity refresh included)",
            lambda m, r, b: f"{each(r, 'ingest')}, peak RSS {r['peak_rss_mb']['ingest']:,.0f} MB"),
        row("CPU seconds, DuckDB / rsr ingest (all processes)",
            lambda m, r, b: f"{r['cpu']['reference']:.0f} / {r['cpu']['ingest']:.0f}"),
        row("**ingest / DuckDB** (target ≤ 1.0)", lambda m, r, b: f"**{r['ratio']:.2f}**"),
        row("`rsr ingest JOBS` again, nothing new", lambda m, r, b: f"{each(r, 'reingest')} "
            f"({r['again']['duplicates']:,} duplicates)"),
        row("**re-ingest / first ingest** (target < 0.1)", lambda m, r, b: f"**{r['reingest_ratio']:.3f}**"),
        row("`rsr ingest TASKS`", lambda m, r, b: f"{r['task_seconds']:.1f} s for {r['tasks']['files']:,} task dirs, "
            f"{1000 * r['task_seconds'] / max(1, r['tasks']['files']):.1f} ms a task"),
        "",
    ]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    """Command line entry point."""
    if len(sys.argv) == 4 and sys.argv[1] == "--reference":
        reference(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", default="43", help="corpora to measure, comma-separated generator seeds")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="corpora (ingest-SEED) and databases")
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds of the three runs")
    parser.add_argument("--write", action="store_true", help="rewrite this section of RESULTS.md")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    results = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        corpus = args.out / f"ingest-{seed}"
        work = args.out / f"ingest-{seed}-db"
        work.mkdir(parents=True, exist_ok=True)
        meta = ensure_corpus(corpus, seed)
        corpus_bytes = warm(corpus)
        results.append((meta, measure(corpus, work, args.rounds), corpus_bytes))
    command = f"python benchmarks/ingest_bench.py --seeds {args.seeds} --rounds {args.rounds}"
    text = section(results, command)
    print(text, flush=True)
    if args.write:
        replace_sections(args.results, {SECTION: text})


if __name__ == "__main__":
    main()
