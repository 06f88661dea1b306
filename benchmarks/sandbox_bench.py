"""Sandbox overhead and one Terminus 2 run against the scripted server with a fixed latency.

    .venv/bin/python benchmarks/sandbox_bench.py [--runs 10] [--latency-ms 200]

Prints a Markdown section for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rsr_core.harness import Terminus2Harness  # noqa: E402
from rsr_core.ingest.tasks import read_harbor_task  # noqa: E402
from rsr_core.llm.client import LLMClient  # noqa: E402
from rsr_core.llm.scripted_server import ScriptedServer  # noqa: E402
from rsr_core.sandbox.docker_sandbox import DockerSandbox  # noqa: E402
from rsr_core.sandbox.engine import docker_client  # noqa: E402
from rsr_core.sandbox.provider import DockerSandboxProvider  # noqa: E402
from rsr_core.settings import Settings  # noqa: E402

TASK = ROOT / "data" / "demo" / "tasks" / "json-to-env"
ANSWERS = [
    {
        "analysis": "read",
        "plan": "cat",
        "commands": [{"keystrokes": "cat /app/config.json\n", "duration": 0.1}],
    },
    {
        "analysis": "write",
        "plan": "python3",
        "commands": [
            {
                "keystrokes": (
                    "python3 -c \"import json; c = json.load(open('/app/config.json')); open('/app/app.env', 'w').write("
                    "''.join(f'{k.upper()}={str(v).lower() if isinstance(v, bool) else v}' + chr(10) for k, v in "
                    'sorted(c.items())))"\n'
                ),
                "duration": 0.1,
            }
        ],
    },
    {"analysis": "done", "plan": "", "commands": [], "task_complete": True},
    {"analysis": "sure", "plan": "", "commands": [], "task_complete": True},
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--latency-ms", type=float, default=200)
    args = parser.parse_args()
    client = docker_client()
    settings = Settings.from_env()
    provider = DockerSandboxProvider(client, settings, budget_s=600)
    task = read_harbor_task(TASK)
    image = provider.image_for(task)
    create, destroy = [], []
    for _ in range(args.runs):
        sb = DockerSandbox(client, image)
        t0 = time.perf_counter()
        sb.start()
        t1 = time.perf_counter()
        sb.remove()
        t2 = time.perf_counter()
        create.append(t1 - t0)
        destroy.append(t2 - t1)
    total = [c + d for c, d in zip(create, destroy, strict=True)]
    server = ScriptedServer(
        {"rules": [{"model": "bench", "turns": ANSWERS}]}, latency_ms=args.latency_ms
    ).start()
    try:
        llm = LLMClient(server.url)
        t0 = time.perf_counter()
        result = Terminus2Harness(llm, provider, "bench").run(task)
        run_s = time.perf_counter() - t0
    finally:
        server.stop()
    command_wait = sum(c["duration"] for a in ANSWERS for c in a["commands"])
    reward = "none" if result.reward is None else f"{result.reward:g}"  # None: a run that was never verified
    print("## Sandboxes and harness\n")
    print(
        f"Command: `.venv/bin/python benchmarks/sandbox_bench.py --runs {args.runs} --latency-ms {args.latency_ms:g}`\n"
    )
    print("| measure | value | target |")
    print("| --- | --- | --- |")
    print(f"| sandbox create + destroy, median of {args.runs} | {statistics.median(total):.2f} s | < 1.5 s |")
    print(
        f"| create (median) / destroy (median) | {statistics.median(create):.2f} s / "
        f"{statistics.median(destroy):.2f} s | |"
    )
    print(
        f"| Terminus 2 run, 4 turns, {args.latency_ms:g} ms model latency | {run_s:.2f} s "
        f"(reward {reward}) | |"
    )
    print(
        f"| of which model latency / command waits | {4 * args.latency_ms / 1000:.2f} s / {command_wait:.2f} s | |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
