"""The writable-space and file-count budgets of a sandbox, enforced from outside.

The engine here runs overlay2 on ext4, where `--storage-opt size=` is refused (it needs xfs with project
quotas), so the budget is watched instead: a thread asks the engine for the container's writable-layer size
(`GET /containers/{id}/json?size=1`, `SizeRw`) about once a second and, when it passes the budget, freezes
the container (`docker pause`: every process stops at once, writes included) and reports the breach. The size
walk gets slower as the layer grows, so the poll interval backs off to twice the last walk's duration; a
filler can overshoot the budget by what it writes in one interval, which is why the budget is a budget and
not a quota. No tmpfs is mounted for the agent: a commit would not carry it into the verifier's container.

SizeRw only sees files that still have a name, so an agent could keep writing into a file it opened and then
deleted. Each poll therefore also adds the space held by deleted files the container's processes keep open or
mapped, read from the host (not from inside, where the agent's own tools could lie): the engine names the
container's processes by their host PIDs (`top`), and the host's `/proc/<pid>/fd` and `/proc/<pid>/map_files`
show which of them point at deleted files of the container's root filesystem, and how many blocks they hold.

The number of files is budgeted too (an inode flood is cheap in bytes): the host's view of the writable layer
(the overlay upper directory the engine reports) is counted, stopping as soon as the count passes the budget,
so a poll's walk is bounded by the budget whatever the agent made.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import docker
import docker.errors

from rsr_core.sandbox.engine_http import inspect_with_size

MIB = 1024 * 1024
POLL_S = 1.0
DELETED = " (deleted)"


def writable_size(api: docker.APIClient, container_id: str) -> int:
    """Bytes in the container's writable layer (the engine's SizeRw)."""
    return int(inspect_with_size(api, container_id).get("SizeRw") or 0)


def container_pids(api: docker.APIClient, container_id: str) -> list[int]:
    """Host PIDs of the container's processes, as the engine lists them."""
    top = api.top(container_id)
    titles = list(top.get("Titles") or [])
    if "PID" not in titles:
        return []
    col = titles.index("PID")
    return [int(row[col]) for row in top.get("Processes") or [] if str(row[col]).isdigit()]


def _deleted_links(proc: str) -> list[str]:
    """Host paths under /proc/<pid> (open files and mapped files) whose target was deleted."""
    found = []
    for sub in ("fd", "map_files"):
        try:
            names = os.listdir(f"{proc}/{sub}")
        except OSError:
            continue  # the process ended, or map_files is not readable here
        for name in names:
            path = f"{proc}/{sub}/{name}"
            try:
                if os.readlink(path).endswith(DELETED):
                    found.append(path)
            except OSError:
                continue
    return found


def held_by_deleted(container_id: str, pids: list[int]) -> int:
    """Bytes of disk held by deleted regular files of the processes' root filesystems that they keep open or
    mapped (each file once; blocks actually allocated, so a sparse file counts what it holds). A PID whose
    cgroup does not name the container is skipped: it ended and was reused, or the engine is on another
    machine and this /proc is not the container's."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        proc = f"/proc/{pid}"
        try:
            with open(f"{proc}/cgroup") as f:
                if container_id not in f.read():
                    continue
            root_dev = os.stat(f"{proc}/root").st_dev
        except OSError:
            continue
        for path in _deleted_links(proc):
            try:
                st = os.stat(path)
            except OSError:
                continue
            # Memory-backed files (memfd, /dev/shm) live on other devices and count against the memory limit.
            key = (st.st_dev, st.st_ino)
            if st.st_dev != root_dev or not stat.S_ISREG(st.st_mode) or key in seen:
                continue
            seen.add(key)
            total += st.st_blocks * 512
    return total


def count_entries(root: str, limit: int) -> int:
    """Files, directories and links under `root` (not following links), counting no further than `limit` + 1."""
    n = 0
    stack = [root]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for entry in it:
                n += 1
                if n > limit:
                    return n
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return n


class DiskWatchdog:
    """Polls a container's writable space (named and deleted-but-held files) and its number of files, and calls
    `on_breach(reason)` once when either passes its budget."""

    def __init__(
        self,
        api: docker.APIClient,
        container_id: str,
        budget_mb: int,
        on_breach: Callable[[str], None],
        max_files: int | None = None,
    ):
        self.api = api
        self.container_id = container_id
        self.budget = budget_mb * MIB
        self.budget_mb = budget_mb
        self.max_files = max_files
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
        info = inspect_with_size(self.api, self.container_id)
        size = int(info.get("SizeRw") or 0)
        held = (
            held_by_deleted(self.container_id, container_pids(self.api, self.container_id))
            if size <= self.budget
            else 0
        )
        if size + held > self.budget:
            deleted = f" ({held // MIB} MiB of it in deleted files still open)" if held else ""
            return (
                f"disk budget exceeded: {(size + held) // MIB} MiB written{deleted}, budget {self.budget_mb} MiB "
                "([environment] storage_mb)"
            )
        upper = ((info.get("GraphDriver") or {}).get("Data") or {}).get("UpperDir")
        if self.max_files is not None and isinstance(upper, str) and os.path.isdir(upper):
            n = count_entries(upper, self.max_files)
            if n > self.max_files:
                return (
                    f"file budget exceeded: more than {self.max_files} files and directories written, "
                    f"budget {self.max_files} ([environment] max_files)"
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
