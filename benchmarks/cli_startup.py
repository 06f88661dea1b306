"""How long `rsr --help` and `rsr ingest --help` take to start: the median wall time of several runs of the
installed console script (after warm-up runs, so the OS file cache is warm), written to benchmarks/RESULTS.md.

    python benchmarks/cli_startup.py [--runs 21] [--budget-ms 300] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.results import replace_sections

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
TITLE = "CLI startup"
COMMANDS = (["--help"], ["ingest", "--help"], ["--version"])
WARMUP = 3


def time_runs(argv: list[str], runs: int) -> list[float]:
    """Wall seconds of `runs` runs of argv (output discarded), after WARMUP untimed ones."""
    times = []
    for i in range(WARMUP + runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        if i >= WARMUP:
            times.append(time.perf_counter() - t0)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="timed runs per command (default 21)")
    parser.add_argument("--budget-ms", type=float, default=300, help="fail when a median exceeds this")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)

    rsr = Path(sys.executable).parent / "rsr"
    python = time_runs([sys.executable, "-c", "pass"], args.runs)
    rows = []
    for cmd in COMMANDS:
        times = time_runs([str(rsr), *cmd], args.runs)
        rows.append((" ".join(["rsr", *cmd]), statistics.median(times), min(times), max(times)))
        print(
            f"{rows[-1][0]:<20} median {rows[-1][1] * 1000:6.0f} ms  (min {min(times) * 1000:.0f}, "
            f"max {max(times) * 1000:.0f}, {args.runs} runs)"
        )
    print(f"{'python -c pass':<20} median {statistics.median(python) * 1000:6.0f} ms")

    if not args.no_write:
        load = os.getloadavg()[0]
        prose = (
            f"`python benchmarks/cli_startup.py --runs {args.runs}` on {platform.machine()}, "
            f"{platform.python_version()}, {datetime.date.today().isoformat()} (2 cores shared with other work, "
            f"load average {load:.1f}). Wall time of the installed `rsr` console script, {args.runs} runs each "
            f"after {WARMUP} warm-up runs; budget {args.budget_ms:.0f} ms. `tests/test_package.py` checks that "
            "`rsr --help` and `rsr ingest --help` import none of streamlit, altair, pandas, docker, duckdb, "
            "pyarrow, openai or pydantic (the commands import the engines they use when they run)."
        )
        lines = [
            f"## {TITLE}",
            "",
            textwrap.fill(prose, width=110, break_long_words=False, break_on_hyphens=False),
            "",
            "| command | median ms | min ms | max ms |",
            "| --- | ---: | ---: | ---: |",
            *(
                f"| `{name}` | {med * 1000:.0f} | {lo * 1000:.0f} | {hi * 1000:.0f} |"
                for name, med, lo, hi in rows
            ),
            f"| `python -c pass` (the interpreter alone) | {statistics.median(python) * 1000:.0f} | "
            f"{min(python) * 1000:.0f} | {max(python) * 1000:.0f} |",
        ]
        replace_sections(RESULTS, {TITLE: "\n".join(lines)})
        print(f"written to {RESULTS}")
    over = [name for name, med, _, _ in rows if med * 1000 > args.budget_ms]
    if over:
        print(f"over the {args.budget_ms:.0f} ms budget: {', '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
