"""The small interfaces implementations are injected through."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from rsr_core.llm.client import Completion
from rsr_core.models import Task
from rsr_core.sandbox.docker_sandbox import DockerSandbox


class LLM(Protocol):
    """Chat completions by model name (any OpenAI-compatible endpoint)."""

    def complete(
        self,
        messages: list[dict[str, str]],
        model: str,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One answer."""
        ...


class SandboxProvider(Protocol):
    """Opens a fresh sandbox for a task (built image, limits from the task)."""

    def open(self, task: Task, labels: dict[str, str] | None = None) -> AbstractContextManager[DockerSandbox]:
        """A started sandbox, removed when the context exits."""
        ...
