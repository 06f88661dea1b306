"""Peak memory of `rsr export` at 10K vs 100K trajectories: streaming keeps it flat.

    python benchmarks/export_memory.py [--sizes 10000,100000] [--formats sft-jsonl,parquet,atif] [--rebuild]

Builds one DuckDB database per size under benchmarks/out/export/ (small Terminus 2 trajectories written
directly through Store.write_trajectories: kept and dropped rewrites with private guidance and harness-control
steps, discovery runs of three harnesses, transfer checks and reviews), then runs each export in a fresh
child process and records its peak RSS (ru_maxrss), the RSS before exporting and the wall time. Rewrites the
"## Export" section of benchmarks/RESULTS.md and nothing else.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "export"
SECTION = "Export"


def _corpus_batch(start: int, n: int):
    from rsr_core.models import Command, Step, Trajectory

    out = []
    for i in range(start, start + n):
        kind = "rewrite" if i % 10 < 6 else "discovery"
        harness = "terminus-2" if kind == "rewrite" or i % 3 == 0 else ("statem", "rsrt")[i % 2]
        task = f"task-{i % 500:03d}"
        steps = [Step(index=1, source="system", message="You solve command-line tasks in a Linux terminal.")]
        if kind == "rewrite":
            steps.append(
                Step(
                    index=2, source="system", message=f"Runbook {i}: check the output.", private_guidance=True
                )
            )
        steps.append(Step(index=0, source="user", message=f"Task {task}: build report {i}.\nroot@box:/app# "))
        for turn in range(2):
            steps.append(
                Step(
                    index=0,
                    source="agent",
                    message=f"Analysis: step {turn} of run {i}.\nPlan: run it.",
                    analysis=f"step {turn} of run {i}.",
                    plan="run it.",
                    commands=[Command(keystrokes=f"python3 step{turn}.py --run {i}\n", duration=1.0)],
                    observation=f"done {turn} for {i}\nroot@box:/app# ",
                    task_complete=turn == 1,
                )
            )
        steps.append(Step(index=0, source="user", message="Are you sure?", harness_control=True))
        steps.append(
            Step(index=0, source="agent", message="Analysis: yes\nPlan: confirm", task_complete=True)
        )
        for j, step in enumerate(steps, 1):
            step.index = j
        out.append(
            Trajectory(
                trajectory_id=f"traj-{i:07d}",
                task_id=task,
                kind=kind,
                harness=harness,
                model="bench-model",
                reward=1.0 if i % 7 else 0.0,
                runbook_id=f"rb-{i // 4}" if kind == "rewrite" else None,
                source_trajectory_id=f"src-{i // 16}" if kind == "rewrite" else None,
                content_hash=str(i),
                steps=steps,
            )
        )
    return out


def build(path: Path, size: int) -> float:
    """Write the corpus of `size` trajectories; returns seconds."""
    from rsr_core.models import Review, TransferVerdict
    from rsr_core.store import Store
    from rsr_core.store.pipeline import insert_review, insert_transfer

    start = time.perf_counter()
    store = Store(path)
    for lo in range(0, size, 2000):
        store.write_trajectories(_corpus_batch(lo, min(2000, size - lo)))
    with store.transaction() as cur:
        for i in range(0, size, 50):  # every 50th run: rewrites (i % 10 == 0) get a transfer verdict
            insert_transfer(cur, TransferVerdict(trajectory_id=f"traj-{i:07d}", answer_transfer=i % 100 == 0))
        for rb in range(0, size // 4, 40):
            insert_review(cur, Review(runbook_id=f"rb-{rb}", decision="reject", reviewer="bench"))
    store.close()
    return time.perf_counter() - start


def _status_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of this process; unlike ru_maxrss, VmHWM is not inherited across exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def probe(db: str, fmt: str, out: str, all_trajectories: bool) -> None:
    """Child process: one export; prints a JSON line of what it measured."""
    from rsr_core.export import ExportFilters, export
    from rsr_core.store import Store

    store = Store(db, read_only=True)
    before = _status_mb("VmRSS")
    start = time.perf_counter()
    summary = export(store, fmt, out, ExportFilters(all_trajectories=all_trajectories))
    seconds = time.perf_counter() - start
    peak = _status_mb("VmHWM")
    print(
        json.dumps(
            {"rss_before_mb": before, "peak_rss_mb": peak, "seconds": seconds, "rows": summary.exported}
        )
    )


def measure(db: Path, fmt: str, all_trajectories: bool) -> dict:
    """Run one export in a fresh interpreter (so each peak RSS is its own)."""
    target = OUT / f"{db.stem}-{fmt}{'-all' if all_trajectories else ''}"
    target = target.with_suffix(
        {"sft-jsonl": ".jsonl", "sharegpt": ".jsonl", "parquet": ".parquet"}.get(fmt, "")
    )
    shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
    args = [sys.executable, __file__, "--probe", str(db), fmt, str(target)] + (
        ["--all"] if all_trajectories else []
    )
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    size = sum(p.stat().st_size for p in target.rglob("*")) if target.is_dir() else target.stat().st_size
    shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
    return {**result, "out_mb": size / 2**20}


def write_section(rows: list[tuple], command: str) -> None:
    """Replace the "## Export" section of RESULTS.md (created if missing); other sections are kept."""
    lines = [
        f"## {SECTION}",
        "",
        f"`{command}` on {platform.machine()}, {platform.python_version()}, {time.strftime('%Y-%m-%d')}.",
        "Each export runs in a fresh process; peak = VmHWM of that process, before = its RSS after opening",
        "the store. Trajectories: 9 steps, 2 commands each (the DuckDB file is built by the script); 60% are",
        "rewrites, 40% discovery runs of three harnesses, so about 60% pass the training filters.",
        "",
        "| trajectories | format | filters | rows written | output MB | RSS before MB | peak RSS MB | seconds |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size, fmt, flt, r in rows:
        lines.append(
            f"| {size:,} | {fmt} | {flt} | {r['rows']:,} | {r['out_mb']:.1f} | {r['rss_before_mb']:.0f} "
            f"| {r['peak_rss_mb']:.0f} | {r['seconds']:.1f} |"
        )
    lines += [
        "",
        "Rows are read in one ordered pass over each table and written as they come: during an export the",
        "process's RSS rises only slowly. What grows with the size of the database is DuckDB's: its buffer",
        "cache keeps the table blocks a scan read (about 0.2 KB per stored trajectory here, up to DuckDB's",
        "memory_limit; `SET memory_limit` bounds it) and the selection query's joins peak at about 0.2 KB",
        "per trajectory before streaming starts; the duplicate filter keeps 16 bytes (+ set overhead) per",
        "exported row. Timings are on 2 shared cores.",
    ]
    section = "\n".join(lines) + "\n"
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^## {SECTION}\s*\n.*?(?=^## |\Z)", re.S | re.M)
    text = (
        pattern.sub(lambda _: section + "\n", text)
        if pattern.search(text)
        else text.rstrip("\n") + "\n\n" + section
    )
    path.write_text(text.rstrip("\n") + "\n")


def main() -> None:
    """Build the corpora, measure, record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="corpus sizes (comma-separated)")
    parser.add_argument("--formats", default="sft-jsonl,parquet,atif", help="formats to measure")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the databases")
    parser.add_argument("--plateau", type=int, default=0, help="also measure sft-jsonl at this larger size")
    parser.add_argument("--probe", nargs=3, metavar=("DB", "FORMAT", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--all", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if args.probe:
        probe(*args.probe, all_trajectories=args.all)
        return
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    plan = [(int(n), args.formats.split(",")) for n in args.sizes.split(",")]
    if args.plateau:
        plan.append((args.plateau, ["sft-jsonl"]))
    for size, formats in plan:
        db = OUT / f"export-{size}.duckdb"
        if args.rebuild or not db.exists():
            db.unlink(missing_ok=True)
            print(f"building {size:,} trajectories: {build(db, size):.0f} s", flush=True)
        for fmt in formats:
            for all_trajectories in (False, True) if fmt == "atif" else (False,):
                r = measure(db, fmt, all_trajectories)
                flt = "--all" if all_trajectories else "training"
                print(f"{size:>7,} {fmt:<10} {flt:<8} {json.dumps(r)}", flush=True)
                rows.append((size, fmt, flt, r))
    command = "python benchmarks/export_memory.py " + " ".join(sys.argv[1:])
    write_section(rows, command.strip())


if __name__ == "__main__":
    main()
