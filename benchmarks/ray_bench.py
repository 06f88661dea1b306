"""Ray backend vs thread backend: executions of a rewrite job against the scripted server with a fixed model
latency, on real Docker sandboxes.

    .venv/bin/python -m benchmarks.ray_bench [--executions 8] [--latency-ms 500]

1. One machine, N = 1..4 concurrent executions: Ray's throughput / the thread backend's (target >= 0.9).
2. Two local Ray nodes with 2 sandboxes each, 4 concurrent: throughput / (4 x one execution's rate) (>= 0.8).
3. Ray's start-up overhead for a job: connecting to a running cluster, putting the base-image tarball in the
   object store, the first task's round trip.
Prints a Markdown section for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rsr_core.harness import Terminus2Harness
from rsr_core.ingest.tasks import content_hash, read_harbor_task
from rsr_core.jobs.backends import ThreadBackend
from rsr_core.jobs.runner import JobRunner
from rsr_core.llm.client import LLMClient
from rsr_core.llm.scripted_server import ScriptedServer
from rsr_core.rewrite.units import RewriteParams
from rsr_core.sandbox.engine import docker_client
from rsr_core.sandbox.provider import DockerSandboxProvider
from rsr_core.settings import Settings
from rsr_core.store import Store
from tests.rewrite.pipeline_script import rules

ROOT = Path(__file__).resolve().parents[1]
TASK = ROOT / "data" / "demo" / "tasks" / "json-to-env"


def execution_rate(store: Store, job_id: str, executions: int) -> float:
    """Executions per second from the first execution's start to the last one's end."""
    with store.reading() as cur:
        span = cur.execute(
            "SELECT epoch(max(finished_at)) - epoch(min(started_at)) FROM work_units "
            "WHERE job_id = ? AND kind = 'execute' AND status = 'done'",
            [job_id],
        ).fetchone()[0]
    return executions / float(span)


def run_job(store: Store, runner: JobRunner, executions: int) -> float:
    params = RewriteParams(
        k=1, m=executions, rounds=2, planner_model="p", critic_model="c", executor_model="e"
    )
    job = runner.create(params)
    assert runner.run(job) == "done", job
    return execution_rate(store, job, executions)


def ray_cluster(sandboxes: list[int]):
    """A local cluster: a head without sandboxes and one node per entry."""
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    # every node on 127.0.0.1, not the machine's network address (Ray's switch for a one-machine cluster)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"sandbox": 0}})
    for n in sandboxes:
        cluster.add_node(num_cpus=1, resources={"sandbox": n})
    cluster.wait_for_nodes()
    return cluster


def main() -> int:
    import ray

    from rsr_core.jobs.ray_backend import RayBackend

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--executions", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=500)
    args = parser.parse_args()
    server = ScriptedServer({"rules": rules()}, latency_ms=args.latency_ms).start()
    llm = LLMClient(server.url)
    settings = Settings.from_env()
    sandboxes = DockerSandboxProvider(docker_client(), settings, budget_s=600)
    task = read_harbor_task(TASK)
    rows, overhead = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        seed = Path(tmp) / "seed.duckdb"
        store = Store(seed)
        store.write_task(task, content_hash(TASK))
        store.write_trajectories([Terminus2Harness(llm, sandboxes, "disc").run(task).trajectory])
        for n in (1, 2, 3, 4):
            db = Path(tmp) / f"t{n}.duckdb"
            shutil.copy(seed, db)
            s = Store(db)
            threads = run_job(s, JobRunner(s, backend=ThreadBackend(llm, sandboxes, n)), args.executions)
            cluster = ray_cluster([n])
            t0 = time.perf_counter()
            backend = RayBackend(cluster.address, settings, server.url, slots=n)
            overhead.setdefault("connect + ship base image", time.perf_counter() - t0)
            if "first task" not in overhead:
                t1 = time.perf_counter()
                ray.get(ray.remote(num_cpus=0)(lambda: 1).remote())
                overhead["first task round trip"] = time.perf_counter() - t1
            db = Path(tmp) / f"r{n}.duckdb"
            shutil.copy(seed, db)
            s = Store(db)
            on_ray = run_job(s, JobRunner(s, backend=backend), args.executions)
            ray.shutdown()
            cluster.shutdown()
            rows.append((n, threads, on_ray))
        cluster = ray_cluster([2, 2])
        db = Path(tmp) / "two-nodes.duckdb"
        shutil.copy(seed, db)
        s = Store(db)
        two = run_job(
            s,
            JobRunner(s, backend=RayBackend(cluster.address, settings, server.url, slots=4)),
            args.executions,
        )
        ray.shutdown()
        cluster.shutdown()
    server.stop()
    single = rows[0][1]
    print("## Ray backend\n")
    print(
        f"Command: `.venv/bin/python -m benchmarks.ray_bench --executions {args.executions} --latency-ms "
        f"{args.latency_ms:g}` (2 cores; each execution: 4 model calls, a sandbox, the verifier)\n"
    )
    print("| concurrent N | threads executions/s | ray executions/s | ray / threads | target |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n, threads, on_ray in rows:
        print(f"| {n} | {threads:.2f} | {on_ray:.2f} | {on_ray / threads:.2f} | >= 0.9 |")
    print(
        f"\nTwo local nodes, 2 sandboxes each, 4 concurrent: {two:.2f} executions/s = "
        f"{two / (4 * single):.2f} x (4 x one execution's rate {single:.2f}/s) (target >= 0.8).\n"
    )
    print("| Ray start-up, per job | seconds |")
    print("| --- | ---: |")
    for name, seconds in overhead.items():
        print(f"| {name} | {seconds:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
