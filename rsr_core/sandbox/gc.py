"""Removing what interrupted runs left behind: sandbox containers and snapshot images of dead owners."""

from __future__ import annotations

import os

import docker
import docker.errors

from rsr_core.sandbox.labels import LABEL, OWNER_LABEL, SNAPSHOT_REPOSITORY


def _owner_gone(labels: dict[str, str]) -> bool:
    owner = labels.get(OWNER_LABEL)
    return not (owner is not None and owner.isdigit() and _pid_alive(int(owner)))


def gc_containers(
    client: docker.DockerClient, everything: bool = False, job_id: str | None = None
) -> list[str]:
    """Remove sandbox containers whose owner process is gone (or all / those of a job); returns their names."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        labels = container.labels or {}
        if everything or (job_id and labels.get("rsr.job") == job_id) or _owner_gone(labels):
            try:
                container.remove(force=True)
                removed.append(container.name or container.short_id)
            except docker.errors.APIError:
                pass
    return removed


def gc_snapshot_images(client: docker.DockerClient, everything: bool = False) -> list[str]:
    """Remove `rsr-snapshot` images whose owner process is gone (or all); returns their repo:tag names.

    A snapshot image carries its sandbox's labels (a commit keeps the container's), owner included; one still
    used by a container is left alone (the engine refuses, and the container's own gc comes first)."""
    removed = []
    for image in client.images.list(name=SNAPSHOT_REPOSITORY):
        labels = (image.attrs.get("Config") or {}).get("Labels") or {}
        if everything or _owner_gone(labels):
            if image.id is None:
                continue
            try:
                client.images.remove(image.id, force=False)
                removed.extend(image.tags or [image.short_id])
            except docker.errors.APIError:
                pass
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
