"""Units as Ray tasks on a cluster (`--backend ray`); the driver stays the only database writer.

- Placement: units that open a sandbox (execute, discover) ask for one `sandbox` resource, which only nodes
  with a Docker engine advertise (`rsr worker start --sandboxes N`, or `ray start --resources
  '{"sandbox": N}'`); model-only units (plan, critic, filter) ask for nothing and run anywhere.
- Faults: a task whose node is lost is retried elsewhere by Ray (`max_retries`); its result reaches the driver
  once, which stores it in one transaction with the unit's `done`, so nothing is stored twice. An error raised
  by the unit itself is not retried: it fails the unit, and `rsr jobs resume` re-runs it.
- Images: each node builds a task's image on first use (cached by content tag, so once per node); a node
  without the base image imports it from its own cached tarball, else from the driver's tarball, shipped once
  through Ray's object store.
- Model endpoint: `RSR_LLM_MAX_CONCURRENCY` requests at once across the cluster, through one named actor.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Any

from rsr_core.jobs.worker import SANDBOX_KINDS, WorkerConfig, run_on_worker
from rsr_core.protocols import Outcome
from rsr_core.settings import Settings

NODE_RETRIES = 3


def connect(address: str | None) -> Any:
    """Connect this process to the cluster (`auto`, `ray://…`, `host:port`; None starts a local one)."""
    import ray

    if not ray.is_initialized():
        ray.init(
            address=address,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
            configure_logging=False,
        )
    return ray


class _Limiter:
    """Permits for requests to one model endpoint, shared by every worker of the cluster."""

    def __init__(self, permits: int):
        self._sem = asyncio.Semaphore(permits)

    async def acquire(self) -> None:
        await self._sem.acquire()

    def release(self) -> None:
        self._sem.release()


def limiter_name(base_url: str) -> str:
    """The actor name of an endpoint's limiter."""
    return "rsr-llm-limit-" + base_url.replace("/", "_")[:100]


def start_limiter(ray: Any, base_url: str, permits: int) -> Any:
    """Create (or find) the endpoint's limiter actor, ready to serve; returns its handle (passed to every unit's
    task, so no worker has to look it up by name)."""
    actor = (
        ray.remote(num_cpus=0)(_Limiter)
        .options(name=limiter_name(base_url), get_if_exists=True, max_concurrency=1000)
        .remote(permits)
    )
    ray.get(actor.__ray_ready__.remote())
    return actor


class RayBackend:
    """Submits units as Ray tasks and collects them as they finish."""

    def __init__(
        self,
        address: str | None,
        settings: Settings,
        base_url: str,
        api_key: str | None = None,
        slots: int | None = None,
    ):
        self.ray = connect(address)
        self.address = address or "local"
        self._limiter = None
        if settings.llm_max_concurrency:
            self._limiter = start_limiter(self.ray, base_url, settings.llm_max_concurrency)
        config = WorkerConfig(settings=settings.model_dump(mode="json"), base_url=base_url, api_key=api_key)
        self._config = config.model_dump_json()
        self._tarball = self._ship_base_image(settings)
        self._task = self.ray.remote(run_on_worker)
        sandboxes = int(self.ray.cluster_resources().get("sandbox", 0))
        self.slots = slots or max(2, sandboxes * 2)

    def _ship_base_image(self, settings: Settings) -> list[Any]:
        """The driver's base-image tarball in the object store, for nodes that lack the image (nested in a
        list so that Ray does not fetch it for every task)."""
        from rsr_core.sandbox.images import tarball_path

        tarball = tarball_path(settings)
        return [self.ray.put(tarball.read_bytes())] if tarball.is_file() else []

    def submit(self, kind: str, inputs: dict[str, Any]) -> Any:
        """One Ray task; sandbox units need a `sandbox` resource."""
        options: dict[str, Any] = {"num_cpus": 0, "max_retries": NODE_RETRIES, "retry_exceptions": False}
        if kind in SANDBOX_KINDS:
            options["resources"] = {"sandbox": 1}
        return self._task.options(**options).remote(kind, inputs, self._config, self._tarball, self._limiter)

    def wait(self, handles: list[Any], timeout: float) -> list[Outcome]:
        """Finished tasks with their results, or the unit's own error (a lost node's task was retried first)."""
        from ray.exceptions import RayTaskError

        ready, _ = self.ray.wait(handles, num_returns=1, timeout=timeout)
        out: list[Outcome] = []
        for ref in ready:
            try:
                out.append((ref, self.ray.get(ref), None))
            except RayTaskError as exc:
                cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                out.append((ref, None, cause))
            except Exception as exc:  # noqa: BLE001 - a task Ray could not finish (retries exhausted): the unit failed
                out.append((ref, None, exc))
        return out

    def where(self) -> str:
        """The cluster."""
        return f"ray at {self.address}"

    def close(self) -> None:
        """Nothing to let go: the process stays connected to the cluster (`connect` joins it once) for its next
        job."""


def on_every_node(ray: Any, fn: Any, *args: Any) -> list[Any]:
    """Run `fn(*args)` once on every alive node of the cluster; returns the results."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(num_cpus=0)(fn)
    refs = [
        task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote(
            *args
        )
        for node in ray.nodes()
        if node.get("Alive")
    ]
    return ray.get(refs)


def _gc_here(everything: bool, job_id: str | None) -> dict[str, Any]:
    import ray

    from rsr_core.sandbox.engine import DockerUnavailable, docker_client
    from rsr_core.sandbox.gc import gc_containers, gc_snapshot_images

    where = {"host": socket.gethostname(), "node": ray.get_runtime_context().get_node_id()[:8]}
    try:
        client = docker_client()
    except DockerUnavailable:
        return {**where, "docker": False, "removed": [], "removed_images": []}
    removed = gc_containers(client, everything, job_id)
    return {
        **where,
        "docker": True,
        "removed": removed,
        "removed_images": gc_snapshot_images(client, everything),
    }


def gc_cluster(
    address: str | None, everything: bool = False, job_id: str | None = None
) -> list[dict[str, Any]]:
    """`rsr sandbox gc` on every node of the cluster."""
    return on_every_node(connect(address), _gc_here, everything, job_id)


def describe(address: str | None) -> dict[str, Any]:
    """Nodes and their sandbox capacity (for the app and `rsr worker status`)."""
    ray = connect(address)
    nodes = [
        {
            "node": n["NodeID"][:8],
            "host": n.get("NodeManagerHostname"),
            "sandboxes": n["Resources"].get("sandbox", 0),
        }
        for n in ray.nodes()
        if n.get("Alive")
    ]
    return {"address": address, "nodes": nodes, "resources": json.loads(json.dumps(ray.cluster_resources()))}
