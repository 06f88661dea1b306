"""Removing what interrupted runs left behind: sandbox containers and snapshot images of dead owners."""

from __future__ import annotations

import docker
import docker.errors

from rsr_core.sandbox.labels import LABEL, OWNER_LABEL, SNAPSHOT_REPOSITORY
from rsr_core.system import pid_alive


def _owner_gone(labels: dict[str, str]) -> bool:
    owner = labels.get(OWNER_LABEL)
    return not (owner is not None and owner.isdigit() and pid_alive(int(owner)))


def gc_containers(
    client: docker.DockerClient, everything: bool = False, job_id: str | None = None
) -> list[str]:
    """Remove sandbox containers whose owner process is gone (or all / those of a job); returns their names."""
    removed: list[str] = []
    # The low-level listing: the high-level one inspects every container after listing them, and one removed
    # in between (by its own auto-remove, or by the gc of another node sharing this engine) would raise
    # NotFound.
    for summary in client.api.containers(all=True, filters={"label": LABEL}):
        labels = summary.get("Labels") or {}
        if everything or (job_id and labels.get("rsr.job") == job_id) or _owner_gone(labels):
            try:
                client.api.remove_container(summary["Id"], force=True)
            except docker.errors.APIError:
                continue  # already gone, or being removed by someone else
            names = summary.get("Names") or []
            removed.append(names[0].lstrip("/") if names else summary["Id"][:12])
    return removed


def gc_snapshot_images(client: docker.DockerClient, everything: bool = False) -> list[str]:
    """Remove `rsr-snapshot` images whose owner process is gone (or all); returns their repo:tag names.

    A snapshot image carries its sandbox's labels (a commit keeps the container's), owner included; one still
    used by a container is left alone (the engine refuses, and the container's own gc comes first)."""
    removed: list[str] = []
    for summary in client.api.images(name=SNAPSHOT_REPOSITORY):  # low-level, for the reason given above
        labels = summary.get("Labels") or {}
        if everything or _owner_gone(labels):
            try:
                client.api.remove_image(summary["Id"], force=False)
            except docker.errors.APIError:
                continue
            removed.extend(summary.get("RepoTags") or [summary["Id"].removeprefix("sha256:")[:12]])
    return removed
