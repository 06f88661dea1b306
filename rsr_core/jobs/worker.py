"""The worker side of a job: run one unit of any kind. Threads call `run_any_unit` with the driver's own model
client and sandboxes; a Ray worker calls `run_on_worker`, which builds them on its node from a serialisable
`WorkerConfig` (once per worker process) and never opens the database."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

from pydantic import BaseModel

from rsr_core.protocols import LLM, SandboxProvider
from rsr_core.settings import Settings

SANDBOX_KINDS = frozenset({"execute", "discover"})
"""Unit kinds that open a sandbox (placed only where a Docker engine is: Ray's `sandbox` resource)."""

REWRITE_KINDS = frozenset({"plan", "critic", "execute", "filter"})


class WorkerConfig(BaseModel):
    """What a worker needs to build its services: the settings, and the endpoint the job uses."""

    settings: dict[str, Any]
    """Settings of the driver (paths and limits apply on the worker's node)."""
    base_url: str
    """The model endpoint."""
    api_key: str | None = None
    """Its key (travels inside the cluster, never stored)."""


def run_any_unit(kind: str, inputs: dict[str, Any], llm: LLM, sandboxes: SandboxProvider) -> dict[str, Any]:
    """Run one unit (rewrite units, or a discovery run) and add where it ran."""
    from rsr_core.jobs.discovery import run_discover_unit
    from rsr_core.llm.meter import MeteredLLM
    from rsr_core.rewrite.units import run_unit

    if kind in REWRITE_KINDS:
        return run_unit(kind, inputs, llm, sandboxes)
    if kind == "discover":
        meter = MeteredLLM(llm)
        result = run_discover_unit(inputs, meter, sandboxes)
        result["usage"] = meter.usage()
        result["worker"] = socket.gethostname()
        return result
    raise ValueError(f"unknown unit kind {kind!r}")


_LLMS: dict[str, LLM] = {}
_SANDBOXES: dict[str, SandboxProvider] = {}
_LOCK = threading.Lock()


def _llm(config: WorkerConfig, limiter: Any = None) -> LLM:
    """This worker process's model client for the config (built once; capped cluster-wide through the limiter
    actor when RSR_LLM_MAX_CONCURRENCY is set)."""
    key = config.model_dump_json() + ("/capped" if limiter is not None else "")
    with _LOCK:
        if key not in _LLMS:
            from rsr_core.llm.client import LLMClient

            settings = Settings.model_validate(config.settings)
            llm: LLM = LLMClient.from_settings(settings, config.base_url, config.api_key)
            if limiter is not None:
                from rsr_core.jobs.capped import cluster_limited

                llm = cluster_limited(llm, limiter)
            _LLMS[key] = llm
        return _LLMS[key]


def _sandboxes(config: WorkerConfig, base_image_tarball: list[Any]) -> SandboxProvider:
    """This node's sandboxes (built once per worker process). The base image is made present on the node
    first: imported from the node's cached tarball, else from the driver's copy in Ray's object store."""
    key = json.dumps(config.settings, sort_keys=True, default=str)
    with _LOCK:
        if key not in _SANDBOXES:
            from rsr_core.sandbox.engine import docker_client
            from rsr_core.sandbox.provider import DockerSandboxProvider

            settings = Settings.model_validate(config.settings)
            client = docker_client()
            ensure_base_image(client, settings, base_image_tarball)
            _SANDBOXES[key] = DockerSandboxProvider(client, settings)
        return _SANDBOXES[key]


def ensure_base_image(client: Any, settings: Settings, shipped: list[Any]) -> None:
    """Make the base image present on this node without a registry (once per node: the image stays)."""
    from rsr_core.sandbox.images import base_is_current, build_base_image, tarball_path

    if base_is_current(client, settings.base_image):
        return
    tarball = tarball_path(settings)
    if not tarball.is_file() and shipped:
        import ray

        data = ray.get(shipped[0])
        tarball.parent.mkdir(parents=True, exist_ok=True)
        partial = tarball.with_suffix(f".{socket.gethostname()}.partial")
        partial.write_bytes(data)
        partial.replace(tarball)
    build_base_image(client, settings, log=lambda _m: None)


def run_on_worker(
    kind: str, inputs: dict[str, Any], config_json: str, base_image_tarball: list[Any], limiter: Any = None
) -> dict[str, Any]:
    """A Ray task's body: build (or reuse) this node's services and run the unit; the result names the node.
    Only units that open a sandbox touch the node's Docker engine."""
    import ray

    config = WorkerConfig(**json.loads(config_json))
    sandboxes = _sandboxes(config, base_image_tarball) if kind in SANDBOX_KINDS else _NO_SANDBOXES
    result = run_any_unit(kind, inputs, _llm(config, limiter), sandboxes)
    node = ray.get_runtime_context().get_node_id()
    result["worker"] = f"{socket.gethostname()}/{node[:8]}"
    return result


class _NoSandboxes:
    """Model-only units run where no Docker engine may be; asking them for a sandbox is a bug."""

    def open(self, task: Any, labels: dict[str, str] | None = None) -> Any:
        raise RuntimeError("this unit kind does not run in a sandbox")


_NO_SANDBOXES: SandboxProvider = _NoSandboxes()
