"""Parallel executions: throughput of the job runner with N workers against the scripted server with a fixed
latency, relative to one worker (target: at least 0.8 x N for N <= 4).

    .venv/bin/python benchmarks/executor_bench.py [--executions 8] [--latency-ms 500]

Prints a Markdown section for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rsr_core.harness import Terminus2Harness  # noqa: E402
from rsr_core.ingest.tasks import content_hash, read_harbor_task  # noqa: E402
from rsr_core.jobs.runner import JobRunner  # noqa: E402
from rsr_core.llm.client import LLMClient  # noqa: E402
from rsr_core.llm.scripted_server import ScriptedServer  # noqa: E402
from rsr_core.rewrite.units import RewriteParams  # noqa: E402
from rsr_core.sandbox.engine import docker_client  # noqa: E402
from rsr_core.sandbox.provider import DockerSandboxProvider  # noqa: E402
from rsr_core.settings import Settings  # noqa: E402
from rsr_core.store import Store  # noqa: E402
from tests.rewrite.pipeline_script import rules  # noqa: E402

TASK = ROOT / "data" / "demo" / "tasks" / "json-to-env"


def execution_span(store: Store, job_id: str) -> float:
    """Seconds from the first execution's start to the last one's end."""
    row = (
        store.cursor()
        .execute(
            "SELECT epoch(max(finished_at)) - epoch(min(started_at)), count(*) FROM work_units "
            "WHERE job_id = ? AND kind = 'execute' AND status = 'done'",
            [job_id],
        )
        .fetchall()[0]
    )
    return float(row[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--executions", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=500)
    args = parser.parse_args()
    server = ScriptedServer({"rules": rules()}, latency_ms=args.latency_ms).start()
    llm = LLMClient(server.url)
    sandboxes = DockerSandboxProvider(docker_client(), Settings.from_env(), budget_s=600)
    task = read_harbor_task(TASK)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        store.write_task(task, content_hash(TASK))
        store.write_trajectories([Terminus2Harness(llm, sandboxes, "disc").run(task).trajectory])
        for workers in (1, 2, 3, 4):
            params = RewriteParams(
                k=1, m=args.executions, rounds=2, planner_model="p", critic_model="c", executor_model="e"
            )
            runner = JobRunner(store, llm, sandboxes, workers=workers)
            job = runner.create(params)
            runner.run(job)
            span = execution_span(store, job)
            rows.append((workers, span, args.executions / span))
    server.stop()
    base = rows[0][2]
    print("## Parallel executions\n")
    print(
        f"Command: `.venv/bin/python benchmarks/executor_bench.py --executions {args.executions} "
        f"--latency-ms {args.latency_ms:g}` (2 cores; each execution: 4 model calls, a sandbox, the verifier)\n"
    )
    print("| workers N | executions | seconds | executions/s | speed-up vs 1 | target 0.8 x N |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for workers, span, rate in rows:
        print(
            f"| {workers} | {args.executions} | {span:.1f} | {rate:.2f} | {rate / base:.2f} | {0.8 * workers:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
