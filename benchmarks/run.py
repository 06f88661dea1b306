"""Paper-scale timings of ingest, list/detail queries and pair similarity; writes benchmarks/RESULTS.md.

    python benchmarks/run.py [--scale 1.0] [--seed 0] [--rounds 3] [--regenerate] [--only ingest,similarity]

Generates the corpus (benchmarks/generate.py) when missing, then runs every measurement in a fresh child
process (benchmarks/probes.py, so each peak RSS is its own) and rewrites the sections "Ingest and queries"
and "Similarity" of RESULTS.md, keeping every other section. Ingest and DuckDB's read_json are timed in
alternation, `--rounds` times each, and compared by their medians, so a busy machine slows both alike.
Timings are wall-clock on this machine; no test asserts them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(ROOT))
from benchmarks.results import replace_sections  # noqa: E402

METRICS = ("exact", "multiset", "order", "transition", "fuzzy")


def child(*args: str, root: Path = ROOT) -> dict:
    """Run `probes.py <args>` in a fresh interpreter against the code under `root`; returns its JSON line."""
    proc = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "probes.py"), *args],
        capture_output=True,
        text=True,
        cwd=root,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ensure_corpus(corpus: Path, seed: int, scale: float, regenerate: bool) -> dict:
    """The corpus description, generating the corpus first when missing or of other parameters."""
    meta_path = corpus / "corpus.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else None
    if regenerate or not meta or meta.get("seed") != seed or meta.get("scale") != scale:
        subprocess.run(
            [sys.executable, str(HERE / "generate.py"), "--out", str(corpus), "--seed", str(seed),
             "--scale", str(scale)],
            check=True, cwd=ROOT,
        )  # fmt: skip
        meta = json.loads(meta_path.read_text())
    meta["bytes"] = sum(p.stat().st_size for p in (corpus / "jobs").rglob("trajectory.json"))
    return meta


def machine() -> str:
    """One line describing where the figures were measured."""
    import duckdb

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"DuckDB {duckdb.__version__}"
    )


@contextmanager
def checkout(rev: str | None) -> Iterator[Path | None]:
    """A temporary git worktree of `rev` with today's probes.py in it (None when no revision is asked)."""
    if not rev:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="rsr-before-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), rev], check=True, cwd=ROOT, capture_output=True
        )
        try:
            (tree / "benchmarks").mkdir(exist_ok=True)
            shutil.copy(HERE / "probes.py", tree / "benchmarks" / "probes.py")
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def _fresh(path: Path) -> str:
    for p in (path, Path(f"{path}.wal")):
        p.unlink(missing_ok=True)
    return str(path)


def ingest_section(out: Path, meta: dict, rounds: int, command: str, before: tuple[str, Path] | None) -> str:
    """Measure ingest vs read_json and the queries (and, with `before`, the same under an older revision)."""
    jobs, db = str(out / "corpus" / "jobs"), out / "bench.duckdb"
    runs: dict[str, list[dict]] = {"sampled": [], "union": [], "ingest": []}
    for _ in range(rounds):
        runs["sampled"].append(child("read_json", jobs, _fresh(out / "read_json.duckdb"), "sampled"))
        runs["ingest"].append(child("ingest", jobs, _fresh(db)))
        runs["union"].append(child("read_json", jobs, _fresh(out / "read_json.duckdb"), "union"))
    _fresh(out / "read_json.duckdb")
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    rss = {k: max(r["peak_rss_mb"] for r in v) for k, v in runs.items()}
    each = {k: ", ".join(f"{r['seconds']:.1f}" for r in v) for k, v in runs.items()}
    ours = runs["ingest"][-1]
    tasks = child("ingest_tasks", str(out / "corpus" / "tasks"), str(db))
    queries = child("queries", str(db))
    ratio, ratio_union = med["ingest"] / med["sampled"], med["ingest"] / med["union"]
    old_rows: list[str] = []
    if before:
        rev, tree = before
        old_db = _fresh(out / "before.duckdb")
        old = child("ingest", jobs, old_db, root=tree)
        child("ingest_tasks", str(out / "corpus" / "tasks"), old_db, root=tree)
        old_q = child("queries", old_db, root=tree)
        _fresh(out / "before.duckdb")
        old_rows = [
            "",
            f"Before the ingest and query work (revision `{rev}`, same corpus, same run):",
            "",
            "| measurement | before | after |",
            "| --- | --- | --- |",
            f"| `rsr ingest` | {old['seconds']:.1f} s (peak RSS {old['peak_rss_mb']:,.0f} MB) | "
            f"{med['ingest']:.1f} s |",
            f"| ingest / read_json defaults | {old['seconds'] / med['sampled']:.2f} | {ratio:.2f} |",
            f"| list page median (slowest filter) | {old_q['list_median_ms']:.1f} ms ({old_q['list_max_ms']:.1f} ms) | "
            f"{queries['list_median_ms']:.1f} ms ({queries['list_max_ms']:.1f} ms) |",
            f"| get_trajectory, 300 steps | {old_q['detail_median_ms']:.1f} ms | {queries['detail_median_ms']:.1f} ms |",
        ]
    lines = [
        "## Ingest and queries",
        "",
        f"`{command}` — {machine()}; medians of {rounds} alternating runs (each run listed in brackets).",
        "",
        f"Corpus (benchmarks/generate.py, seed {meta['seed']}, scale {meta['scale']}): {meta['tasks']:,} tasks, "
        f"{meta['discovery']:,} discovery + {meta['rewrite']:,} rewrite trajectories in harbor job dirs, "
        f"{ours['steps']:,} steps ({meta['over_300']} trajectories over 300 agent steps), "
        f"{ours['commands']:,} commands, {meta['bytes'] / 1e6:,.0f} MB of trajectory.json.",
        "",
        "| measurement | result | target |",
        "| --- | --- | --- |",
        f"| DuckDB `read_json` (defaults: schema from a sample of files, so the rewrites' `extra.rsr` is not "
        f"read) + unnest of the steps | {med['sampled']:.1f} s [{each['sampled']}], peak RSS "
        f"{rss['sampled']:,.0f} MB | |",
        f"| DuckDB `read_json(union_by_name = true)` (every file's fields) + unnest of the steps | "
        f"{med['union']:.1f} s [{each['union']}], peak RSS {rss['union']:,.0f} MB | |",
        f"| `rsr ingest` (ingest_paths: {ours['workers']} parser processes, rows, commands and search terms "
        f"stored) | {med['ingest']:.1f} s [{each['ingest']}], peak RSS {rss['ingest']:,.0f} MB | |",
        f"| ingest / read_json defaults | **{ratio:.2f}** | ≤ 2 ({'met' if ratio <= 2 else 'missed'}) |",
        f"| ingest / read_json union_by_name | {ratio_union:.2f} | |",
        f"| task dirs ({tasks['tasks']:,} harbor tasks, for categories) | {tasks['seconds']:.1f} s | |",
        f"| list page (filters + search + page of 50), median over {queries['list_runs']} filters | "
        f"**{queries['list_median_ms']:.1f} ms** (slowest filter {queries['list_max_ms']:.1f} ms) | < 100 ms |",
        f"| count of the same filtered lists, median | {queries['count_median_ms']:.1f} ms | |",
        f"| get_trajectory of a {queries['detail_steps']}-step trajectory, median over {queries['detail_runs']} "
        f"such trajectories | **{queries['detail_median_ms']:.1f} ms** | < 300 ms |",
        "",
        "List filters timed (each the median of 7 runs after one warm-up): "
        + "; ".join(f"`{f}`" for f in queries["filters"])
        + ".",
        *old_rows,
        "",
    ]
    return "\n".join(lines)


def similarity_section(out: Path, command: str, before: tuple[str, Path] | None) -> str:
    """Measure every pair metric over the passed rewrites of the ingested corpus; returns the section."""
    db = str(out / "bench.duckdb")
    results = [child("similarity", db, metric) for metric in METRICS]
    cli = child("similarity_cli", db)
    first = results[0]
    lines = [
        "## Similarity",
        "",
        f"`{command}` — {machine()}. All unordered pairs of passed rewrites of the same task "
        f"({first['trajectories']:,} trajectories, {first['pairs']:,} pairs, {first['commands']:,} commands); "
        "each metric in its own process.",
        "",
        "| metric | load frames | score all pairs | bootstrap CIs | peak RSS | same-runbook mean | "
        "cross-runbook mean |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r['metric']} | {r['load_s']:.2f} s | **{r['score_s']:.2f} s** | {r['summary_s']:.2f} s | "
            f"{r['peak_rss_mb']:,.0f} MB | {r['same_mean']:.3f} ({r['same_pairs']:,} pairs) | "
            f"{r['cross_mean']:.3f} ({r['cross_pairs']:,} pairs) |"
        )
    total = first["load_s"] + first["score_s"]
    lines += [
        "",
        f"Target: exact over all same-task pairs < 3 s — load + score {total:.2f} s "
        f"({'met' if total < 3 else 'missed'}). `rsr similarity --json` end to end (process start, store "
        f"open, load, score, bootstrap): {cli['seconds']:.2f} s.",
    ]
    if before:
        rev, tree = before
        old = child("similarity", db, "exact", root=tree)
        lines.append(
            f"Before (revision `{rev}`: commands fetched ordered into pandas and factorised there): exact "
            f"load {old['load_s']:.2f} s + score {old['score_s']:.2f} s = {old['load_s'] + old['score_s']:.2f} s, "
            f"peak RSS {old['peak_rss_mb']:,.0f} MB; same figures ({old['same_mean']:.3f} / {old['cross_mean']:.3f})."
        )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the paper-scale task counts")
    parser.add_argument("--rounds", type=int, default=3, help="alternating ingest / read_json runs")
    parser.add_argument("--regenerate", action="store_true", help="write the corpus again")
    parser.add_argument("--only", default="ingest,similarity", help="sections to run (ingest, similarity)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="corpus and databases (gitignored)")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--before", metavar="REV", help="also measure this git revision (before/after rows)")
    args = parser.parse_args()
    command = "python benchmarks/run.py" + "".join(
        f" --{k} {v}"
        for k, v in (("scale", args.scale), ("seed", args.seed), ("rounds", args.rounds), ("before", args.before))
        if v != parser.get_default(k)
    )  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    sections: dict[str, str] = {}
    started = time.perf_counter()
    with checkout(args.before) as tree:
        before = (args.before, tree) if tree else None
        if "ingest" in only:
            meta = ensure_corpus(args.out / "corpus", args.seed, args.scale, args.regenerate)
            sections["Ingest and queries"] = ingest_section(args.out, meta, args.rounds, command, before)
            print(sections["Ingest and queries"], flush=True)
        if "similarity" in only:
            sections["Similarity"] = similarity_section(args.out, command, before)
            print(sections["Similarity"], flush=True)
    replace_sections(args.results, sections)
    print(f"wrote {args.results} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
