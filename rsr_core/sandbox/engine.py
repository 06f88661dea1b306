"""Connecting to the Docker engine, with a message that says how to get one."""

from __future__ import annotations

import docker
import docker.errors

from rsr_core.errors import RsrError


class DockerUnavailable(RsrError):
    """No Docker engine answers."""


def docker_client() -> docker.DockerClient:
    """A client for the local engine (DOCKER_HOST or the default socket)."""
    try:
        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except docker.errors.DockerException as exc:
        raise DockerUnavailable(
            "no Docker engine answers: start one (as root on Debian: `scripts/ensure_docker.sh`, which installs "
            f"docker.io and starts dockerd) — {exc}"
        ) from None
