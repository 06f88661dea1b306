"""The small interfaces implementations are injected through: a model client, a sandbox and the provider that
opens one, a job backend. Nothing here names an implementation (those are rsr_core/llm/client.py,
rsr_core/sandbox/docker_sandbox.py and provider.py, rsr_core/jobs/backends.py and ray_backend.py); the values
that cross these interfaces are plain data classes defined here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from rsr_core.models import ChangedPath, Task


@dataclass(frozen=True)
class Completion:
    """One model answer."""

    text: str
    """The answer, thinking taken out (what is parsed, and what training rows hold as the assistant's turn)."""
    model: str
    prompt_tokens: int
    completion_tokens: int
    truncated: bool = False
    """Cut by this client's size cap (`max_answer_bytes`)."""
    reasoning: str | None = None
    """The model's thinking: the message's reasoning field and thinking written inline before the answer."""
    finish_reason: str | None = None
    """Why the model stopped (`length`: it reached `max_tokens` and the answer is cut)."""


@dataclass(frozen=True)
class ModelLimits:
    """What one request to a model may hold."""

    context_length: int | None
    """Tokens of prompt and answer together the model takes (vLLM's `max_model_len`, else a setting); None when
    not known."""
    max_tokens: int
    """The answer budget sent with each request (`max_tokens`: the role's setting)."""


class LLM(Protocol):
    """Chat completions by model name (any OpenAI-compatible endpoint)."""

    def limits(self, model: str) -> ModelLimits:
        """The model's context length and answer budget."""
        ...

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


@dataclass(frozen=True)
class ExecResult:
    """Exit code and combined output of a command run in a sandbox."""

    exit_code: int
    output: str

    @property
    def timed_out(self) -> bool:
        """`timeout` ended the command."""
        return self.exit_code in (124, 137)


class RunVerification(Protocol):
    """What checking a finished run gives: the tests' reward and output, and what the run changed on disk."""

    @property
    def reward(self) -> float | None:
        """The reward as measured (None when the tests did not run or named none)."""
        ...

    @property
    def output(self) -> str | None:
        """What the tests printed."""
        ...

    @property
    def passed(self) -> bool:
        """The tests passed and the run left the verifier's own ground alone."""
        ...

    @property
    def tampered(self) -> bool:
        """The run changed the verifier's own ground."""
        ...

    @property
    def changed_paths(self) -> list[ChangedPath]:
        """What the run changed on disk (as stored)."""
        ...

    def extra(self) -> dict[str, Any]:
        """Facts of the check to keep with the trajectory."""
        ...


class Sandbox(Protocol):
    """A fresh, isolated machine for one run; the agent's terminal runs in its shell."""

    limit_reason: str | None
    """The resource limit that ended the run, once one did."""

    def shell(self, script: str, timeout_s: float = ...) -> ExecResult:
        """Run a shell script (one round trip); raises SandboxFailure when the sandbox stopped working."""
        ...

    def exec(
        self,
        cmd: str | list[str],
        timeout_s: float | None = None,
        workdir: str | None = None,
        environment: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run one command."""
        ...

    def put_files(self, files: Mapping[str, bytes | str], dest: str = "/", dirs: Sequence[str] = ()) -> None:
        """Copy files in."""
        ...

    def check_limits(self) -> str | None:
        """Which resource limit ended the run, if one did."""
        ...

    def verify(self, task: Task, keep_agent: bool = False, run_tests: bool = True) -> RunVerification:
        """Check the run: what it changed, then the hidden tests where the agent cannot reach them."""
        ...


class SandboxProvider(Protocol):
    """Opens a fresh sandbox for a task (built image, limits from the task)."""

    def open(self, task: Task, labels: dict[str, str] | None = None) -> AbstractContextManager[Sandbox]:
        """A started sandbox, removed when the context exits."""
        ...


Outcome = tuple[Any, dict[str, Any] | None, BaseException | None]
"""A finished unit: (handle, result, error); exactly one of result and error is set."""


class Backend(Protocol):
    """Runs a job's units somewhere and reports them back as they finish; never touches the store."""

    slots: int
    """How many units the driver keeps in flight."""

    def submit(self, kind: str, inputs: dict[str, Any]) -> Any:
        """Start one unit; returns a handle."""
        ...

    def wait(self, handles: list[Any], timeout: float) -> list[Outcome]:
        """The units among `handles` that finished (at least one unless `timeout` passed)."""
        ...

    def where(self) -> str:
        """Where units run, for the job's record."""
        ...

    def close(self) -> None:
        """Stop taking units."""
        ...
