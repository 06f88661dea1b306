"""What the tests' Python costs inside a sandbox with the image's bytecode and with a fresh bytecode cache.

    .venv/bin/python benchmarks/verifier_bytecode.py [--image rsr-base:bookworm] [--runs 9]

Runs a one-test pytest session in one container of the image, alternating the two ways, and prints the median
CPU seconds (user + system, as bash's `times` reports them for the session's process) of each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rsr_core.sandbox.docker_sandbox import DockerSandbox  # noqa: E402
from rsr_core.sandbox.engine import docker_client  # noqa: E402

SETUP = "mkdir -p /t && printf 'def test_a():\\n    assert 1\\n' > /t/test_a.py"
# `times` prints the shell's and then (its last line) its children's user and system time: "0m0.104s 0m0.038s".
SESSION = "cd /t && {env} python3 -m pytest -q -p no:cacheprovider /t >/dev/null; times"


def cpu_seconds(times_line: str) -> float:
    total = 0.0
    for part in times_line.split():
        minutes, seconds = part.rstrip("s").split("m")
        total += int(minutes) * 60 + float(seconds)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="rsr-base:bookworm")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    ways = {
        "image's bytecode": "",
        "fresh PYTHONPYCACHEPREFIX": "PYTHONPYCACHEPREFIX=/tmp/pc-$RANDOM$RANDOM",
    }
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    with DockerSandbox(docker_client(), args.image) as sb:
        assert sb.exec(SETUP).exit_code == 0
        for _ in range(args.runs):
            for name, env in ways.items():
                res = sb.exec(SESSION.format(env=f"env {env}" if env else ""))
                cpu[name].append(cpu_seconds(res.output.strip().splitlines()[-1]))
    print(f"| pytest session in `{args.image}`, {args.runs} runs each | median CPU s | min | max |")
    print("| --- | ---: | ---: | ---: |")
    for name, values in cpu.items():
        print(f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")


if __name__ == "__main__":
    main()
