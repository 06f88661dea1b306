"""The writable-space budget of a sandbox, enforced from outside.

The engine here runs overlay2 on ext4, where `--storage-opt size=` is refused (it needs xfs with project
quotas), so the budget is watched instead: a thread asks the engine for the container's writable-layer size
(`GET /containers/{id}/json?size=1`, `SizeRw`) about once a second and, when it passes the budget, freezes
the container (`docker pause`: every process stops at once, writes included) and reports the breach. The size
walk gets slower as the layer grows, so the poll interval backs off to twice the last walk's duration; a
filler can overshoot the budget by what it writes in one interval, which is why the budget is a budget and
not a quota. No tmpfs is mounted for the agent: a commit would not carry it into the verifier's container.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import docker
import docker.errors

from rsr_core.sandbox.engine_http import inspect_with_size

MIB = 1024 * 1024
POLL_S = 1.0


def writable_size(api: docker.APIClient, container_id: str) -> int:
    """Bytes in the container's writable layer (the engine's SizeRw)."""
    return int(inspect_with_size(api, container_id).get("SizeRw") or 0)


class DiskWatchdog:
    """Polls a container's writable-layer size and calls `on_breach(reason)` once when it passes the budget."""

    def __init__(
        self,
        api: docker.APIClient,
        container_id: str,
        budget_mb: int,
        on_breach: Callable[[str], None],
    ):
        self.api = api
        self.container_id = container_id
        self.budget = budget_mb * MIB
        self.budget_mb = budget_mb
        self.on_breach = on_breach
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="rsr-disk-watchdog", daemon=True)

    def start(self) -> None:
        """Start polling."""
        self._thread.start()

    def stop(self) -> None:
        """Stop polling (returns without waiting for a size walk in progress)."""
        self._stop.set()

    def check(self) -> str | None:
        """One poll now: the breach reason, or None while within budget."""
        size = writable_size(self.api, self.container_id)
        if size > self.budget:
            return (
                f"disk budget exceeded: {size // MIB} MiB written, budget {self.budget_mb} MiB "
                "([environment] storage_mb)"
            )
        return None

    def _watch(self) -> None:
        interval = POLL_S
        while not self._stop.wait(interval):
            t0 = time.monotonic()
            try:
                reason = self.check()
            except (docker.errors.APIError, docker.errors.DockerException, OSError, ValueError):
                return  # the container is gone: nothing left to watch
            if reason is not None:
                self.on_breach(reason)
                return
            interval = max(POLL_S, 2 * (time.monotonic() - t0))


def oom_killed(api: docker.APIClient, container_id: str) -> bool:
    """Did the engine report an OOM kill in the container since it was created (its event log, not the
    container's own counters)?"""
    created = api.inspect_container(container_id)["Created"]
    since = int(datetime.fromisoformat(created[:26].rstrip("Z") + "+00:00").timestamp()) - 1
    until = int(datetime.now(UTC).timestamp()) + 1
    events = api.events(since=since, until=until, filters={"container": container_id, "event": "oom"})
    return any(True for _ in events)
