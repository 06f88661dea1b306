"""Jobs on a real local Ray cluster (several nodes on this machine, each with its own `sandbox` resource), the
real Docker engine, real DuckDB and the scripted OpenAI-protocol server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from rsr_core.jobs.ray_backend import RayBackend, gc_cluster
from rsr_core.jobs.runner import JobRunner
from rsr_core.llm.scripted_server import ScriptedServer
from rsr_core.rewrite.units import RewriteParams
from rsr_core.sandbox.labels import LABEL
from rsr_core.settings import Settings
from rsr_core.store import Store
from rsr_core.store import jobs as jobs_sql
from rsr_core.store import pipeline as pipeline_sql
from tests.rewrite.pipeline_script import rules

ray = pytest.importorskip("ray", reason="make test installs the [ray] extra")
pytestmark = [pytest.mark.docker, pytest.mark.ray]
RSR = [sys.executable, "-m", "rsr_core.cli"]
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray binds every node to 127.0.0.1
PARAMS = {"k": 2, "m": 2, "planner_model": "p", "critic_model": "c", "executor_model": "e"}


@pytest.fixture(scope="module")
def cluster(docker_engine):
    """A head node without sandboxes (model-only units) and two sandbox nodes with two sandboxes each."""
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    # Every node on the loopback address, never the machine's network address: Ray's own switch for a
    # cluster that stays on one machine, read by this process (imported already) and by the nodes and
    # drivers it starts (from the environment).
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LOOPBACK_ONLY, "0")
        mp.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"sandbox": 0}})
        nodes = [c.add_node(num_cpus=1, resources={"sandbox": 2}) for _ in range(2)]
        c.wait_for_nodes()
        mp.setenv("RAY_ADDRESS", c.address)
        ray.init(address=c.address, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        yield c, nodes
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()


@pytest.fixture
def db(seeded, tmp_path):
    path = tmp_path / "rsr.duckdb"
    shutil.copy(seeded[0], path)
    return path


def _node_ids() -> dict[str, float]:
    return {n["NodeID"][:8]: n["Resources"].get("sandbox", 0) for n in ray.nodes() if n.get("Alive")}


def _job_containers(docker_engine, job_id: str) -> list:
    """The job's sandbox containers (one listing call: no per-container lookup that could race their removal)."""
    return docker_engine.api.containers(all=True, filters={"label": [f"{LABEL}=1", f"rsr.job={job_id}"]})


def test_a_rewrite_job_runs_on_the_cluster_with_sandbox_units_only_on_sandbox_nodes(
    cluster, db, docker_engine
):
    c, _ = cluster
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}  # nothing on the network
    srv = ScriptedServer({"rules": rules()}).start()
    try:
        settings = Settings.from_env({"RSR_DB": str(db)})
        store = Store(db)
        backend = RayBackend(c.address, settings, srv.url)
        runner = JobRunner(store, backend=backend)
        job = runner.create(RewriteParams(**PARAMS))
        assert runner.run(job) == "done"
    finally:
        srv.stop()
    cur = store.cursor()
    units = jobs_sql.units_of(cur, job)
    assert units and all(u["status"] == "done" for u in units)
    sandbox_nodes = {node for node, n in _node_ids().items() if n > 0}
    for u in units:
        node = u["worker"].rsplit("/", 1)[1]
        if u["kind"] == "execute":
            assert node in sandbox_nodes, u  # placed only where a Docker engine is advertised
    assert len({u["worker"] for u in units}) >= 2
    funnel = pipeline_sql.funnel(cur)
    assert (funnel["executions"], funnel["verified"], funnel["answer_transfer"], funnel["kept"]) == (
        4,
        4,
        1,
        3,
    )
    assert _job_containers(docker_engine, job) == []


def test_losing_a_node_mid_job_still_ends_with_exactly_the_expected_rows(cluster, db, docker_engine):
    c, nodes = cluster
    srv = ScriptedServer({"rules": rules()}, latency_ms=400).start()  # executions take seconds
    try:
        settings = Settings.from_env({"RSR_DB": str(db)})
        store = Store(db)
        runner = JobRunner(store, backend=RayBackend(c.address, settings, srv.url, slots=4))
        job = runner.create(RewriteParams(**{**PARAMS, "m": 3}))
        outcome: dict[str, str] = {}
        thread = threading.Thread(target=lambda: outcome.update(status=runner.run(job)))
        thread.start()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # wait until executions are in flight, then lose a node
            with store.reading() as cur:
                running = jobs_sql.unit_counts(cur, job)["execute"].get("running", 0)
            if running >= 2:
                break
            time.sleep(0.2)
        assert running >= 2
        victim = nodes.pop()
        c.remove_node(victim, allow_graceful=False)
        thread.join(timeout=600)
        assert outcome.get("status") == "done"
    finally:
        srv.stop()
    cur = store.cursor()
    units = jobs_sql.units_of(cur, job)
    assert all(u["status"] == "done" for u in units)
    executions = [u for u in units if u["kind"] == "execute"]
    rewrites = [t for t in store.list_trajectories(limit=1000) if t["kind"] == "rewrite" and
                store.get_trajectory(t["trajectory_id"], 1, 0).job_id == job]  # fmt: skip
    assert len(executions) == 2 * 3 and len(rewrites) == 6  # each execution stored once, none twice
    assert pipeline_sql.funnel(cur)["executions"] == 6
    gc_cluster(c.address, job_id=job)  # what the dead node's workers left behind
    assert _job_containers(docker_engine, job) == []
    nodes.append(c.add_node(num_cpus=1, resources={"sandbox": 2}))  # leave the cluster as found
    c.wait_for_nodes()


def test_driver_killed_then_resumed_on_the_cluster(cluster, db, docker_engine):
    c, _ = cluster
    srv = ScriptedServer({"rules": rules()}, latency_ms=300).start()
    env = {**os.environ, "RSR_LLM_BASE_URL": srv.url, "RSR_DB": str(db)}
    ray_args = ["--backend", "ray", "--ray-address", c.address]
    try:
        proc = subprocess.Popen(
            [
                *RSR,
                "rewrite",
                "--k",
                "2",
                "--m",
                "3",
                "--planner-model",
                "p",
                "--critic-model",
                "c",
                "--executor-model",
                "e",
                *ray_args,
            ],
            env=env,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        job_id = proc.stderr.readline().split()[1]
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if _job_containers(docker_engine, job_id):
                break
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        res = subprocess.run(
            [*RSR, "jobs", "resume", job_id, "--json", *ray_args],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["status"] == "done"
    finally:
        srv.stop()
    store = Store(db)
    units = jobs_sql.units_of(store.cursor(), job_id)
    assert all(u["status"] == "done" for u in units)
    rewrites = [t for t in store.list_trajectories(limit=1000) if t["kind"] == "rewrite"]
    assert len([u for u in units if u["kind"] == "execute"]) == 6 and len(rewrites) == 6
    assert _job_containers(docker_engine, job_id) == []


def test_sandbox_gc_runs_on_every_node(cluster):
    c, _ = cluster
    out = subprocess.run(
        [*RSR, "sandbox", "gc", "--ray-address", c.address, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    nodes = json.loads(out.stdout)["nodes"]
    assert {n["node"] for n in nodes} == set(_node_ids()) and all(n["docker"] for n in nodes)


def test_the_model_endpoint_cap_holds_across_the_cluster(cluster, db):
    c, _ = cluster
    srv = ScriptedServer({"rules": rules()}, latency_ms=150).start()
    try:
        settings = Settings.from_env({"RSR_DB": str(db), "RSR_LLM_MAX_CONCURRENCY": "1"})
        store = Store(db)
        runner = JobRunner(store, backend=RayBackend(c.address, settings, srv.url, slots=6))
        assert runner.run(runner.create(RewriteParams(**{**PARAMS, "m": 3}))) == "done"
        capped = srv.max_in_flight
    finally:
        srv.stop()
    assert capped == 1  # planners, critics and executions on several nodes at once: one request at a time
