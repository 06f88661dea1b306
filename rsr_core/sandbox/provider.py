"""Opening sandboxes for tasks: image built from the task, limits from its metadata."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import docker

from rsr_core.models import Task
from rsr_core.sandbox.docker_sandbox import (
    DEFAULT_BUDGET_S,
    DEFAULT_CPUS,
    DEFAULT_MAX_FILES,
    DEFAULT_MEMORY_MB,
    DEFAULT_PIDS,
    DEFAULT_STORAGE_MB,
    DockerSandbox,
    Limits,
)
from rsr_core.sandbox.fs import ImageReads
from rsr_core.sandbox.images import task_image
from rsr_core.sandbox.verification import verify_run
from rsr_core.settings import Settings


class DockerSandboxProvider:
    """Implements `SandboxProvider` on the Docker engine; task images are built once and cached."""

    def __init__(self, client: docker.DockerClient, settings: Settings, budget_s: float | None = None):
        self.client = client
        self.settings = settings
        self.budget_s = budget_s
        self._images: dict[str, str] = {}
        self._lock = threading.Lock()
        self.image_reads = ImageReads()

    def image_for(self, task: Task) -> str:
        """The task's image (built on first use)."""
        with self._lock:
            if task.task_id not in self._images:
                self._images[task.task_id] = task_image(self.client, task, self.settings)
            return self._images[task.task_id]

    def limits_for(self, task: Task) -> Limits:
        """Limits from the task, defaults where it says nothing (`[environment] cpus, memory_mb, pids_limit,
        storage_mb, max_files, cap_add`); network only if the task allows it and the user opted in
        (RSR_ALLOW_NETWORK)."""
        budget = self.budget_s or (task.agent_timeout_sec or DEFAULT_BUDGET_S) + (
            task.verifier_timeout_sec or 600
        )
        return Limits(
            cpus=task.cpus or DEFAULT_CPUS,
            memory_mb=task.memory_mb or DEFAULT_MEMORY_MB,
            pids=task.pids_limit or DEFAULT_PIDS,
            storage_mb=task.storage_mb or DEFAULT_STORAGE_MB,
            max_files=task.max_files or DEFAULT_MAX_FILES,
            cap_add=tuple(task.cap_add),
            network=bool(task.allow_internet and self.settings.allow_network),
            budget_s=budget,
        )

    @contextmanager
    def open(self, task: Task, labels: dict[str, str] | None = None) -> Iterator[DockerSandbox]:
        """A started sandbox for the task, always removed afterwards."""
        sandbox = DockerSandbox(
            self.client,
            self.image_for(task),
            self.limits_for(task),
            {"rsr.task": task.task_id, **(labels or {})},
            verifier=verify_run,
            image_reads=self.image_reads,
        )
        try:
            sandbox.start()
            yield sandbox
        finally:
            sandbox.remove()
