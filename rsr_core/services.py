"""The one factory of services (store, model client, Docker sandboxes) for the CLI and the app."""

from __future__ import annotations

import sys
from functools import cached_property

import docker

from rsr_core.llm.client import LLMClient
from rsr_core.sandbox.engine import docker_client
from rsr_core.sandbox.provider import DockerSandboxProvider
from rsr_core.settings import Settings
from rsr_core.store import Store


class Services:
    """Lazily built, shared services; nothing is connected until first used."""

    def __init__(
        self,
        settings: Settings,
        store: Store | None = None,
        llm: LLMClient | None = None,
        db_wait_s: float | None = None,
    ):
        self.settings = settings
        self._store = store
        self._llm = llm
        self.db_wait_s = settings.db_wait_s if db_wait_s is None else db_wait_s

    @property
    def store(self) -> Store:
        """The DuckDB store (opened per use; a wait for another process is reported on stderr)."""
        if self._store is None:
            self._store = Store(
                self.settings.db_path,
                wait_s=self.db_wait_s,
                on_wait=lambda m: print(f"rsr: {m}", file=sys.stderr, flush=True),
            )
        return self._store

    @property
    def llm(self) -> LLMClient:
        """The model endpoint client (raises LLMError with guidance when none is configured)."""
        if self._llm is None:
            self._llm = LLMClient.from_settings(self.settings)
        return self._llm

    @cached_property
    def docker(self) -> docker.DockerClient:
        """The Docker engine (raises DockerUnavailable with guidance)."""
        return docker_client()

    @cached_property
    def sandboxes(self) -> DockerSandboxProvider:
        """Sandboxes for tasks."""
        return DockerSandboxProvider(self.docker, self.settings)
