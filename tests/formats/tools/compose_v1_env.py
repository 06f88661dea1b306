"""harbor's Docker environment driven through Docker Compose v1 (`docker-compose`, Debian's package), for
machines without the Compose v2 plugin. Only the CLI runtime changes, with the same dialect flags harbor
itself uses for the 1.x compose frontend of Podman (no `compose cp`, no `--wait`, no
`--project-directory`), and `exec` told not to allocate a TTY (`-T`, which Compose v2 decides by itself);
harbor's own orchestration, agents, verifier and result writing run unchanged.

Used as `harbor run --env compose_v1_env:ComposeV1Environment` with this directory on PYTHONPATH.
"""

from __future__ import annotations

from typing import Any

from harbor.environments.docker.docker import DockerEnvironment
from harbor.environments.docker.runtime import ContainerRuntime

COMPOSE_V1 = ContainerRuntime(
    engine=("docker",),
    compose=("docker-compose",),
    supports_compose_wait=False,
    supports_compose_cp=False,
    supports_compose_project_directory=False,
)


class ComposeV1Environment(DockerEnvironment):
    """DockerEnvironment whose compose frontend is `docker-compose` (v1)."""

    @classmethod
    def runtime(cls) -> ContainerRuntime:
        return COMPOSE_V1

    async def _run_docker_compose_command(self, command: list[str], *args: Any, **kwargs: Any) -> Any:
        if command[:1] == ["exec"] and "-T" not in command and "--no-TTY" not in command:
            command = ["exec", "-T", *command[1:]]
        return await super()._run_docker_compose_command(command, *args, **kwargs)
