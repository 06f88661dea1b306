"""Freezing a sandbox when runc cannot stop its processes in time (seen on a loaded machine right after the
verifier's `kill -9 -1`): tried again a bounded number of times, and any other refusal is reported at once."""

from __future__ import annotations

import docker.errors
import pytest

from rsr_core.errors import SandboxFailure
from rsr_core.sandbox import docker_sandbox
from rsr_core.sandbox.docker_sandbox import freeze_container

# The engine's own wording (Docker 20.10, runc on cgroup v1).
UNABLE = "Cannot pause container c25099ff10b5: OCI runtime pause failed: unable to freeze: unknown"


class Refusing:
    """A container whose pause is refused `times` times with `message`, then succeeds."""

    def __init__(self, times: int, message: str = UNABLE) -> None:
        self.times, self.message, self.calls = times, message, 0

    def pause(self) -> None:
        self.calls += 1
        if self.calls <= self.times:
            raise docker.errors.APIError(self.message, explanation=self.message)


@pytest.fixture(autouse=True)
def _no_wait(monkeypatch):
    monkeypatch.setattr(docker_sandbox, "FREEZE_RETRY_S", 0.0)


def test_a_freeze_runc_could_not_finish_is_tried_again():
    container = Refusing(times=2)
    freeze_container(container)  # type: ignore[arg-type]
    assert container.calls == 3


def test_a_freeze_that_never_succeeds_fails_after_the_last_attempt():
    container = Refusing(times=99)
    with pytest.raises(SandboxFailure, match=r"cannot freeze the sandbox: .*unable to freeze"):
        freeze_container(container, attempts=4)  # type: ignore[arg-type]
    assert container.calls == 4


def test_other_refusals_are_not_tried_again_and_a_paused_container_stays_paused():
    gone = Refusing(times=1, message="No such container: c25099ff10b5")
    with pytest.raises(SandboxFailure, match="No such container"):
        freeze_container(gone)  # type: ignore[arg-type]
    assert gone.calls == 1
    paused = Refusing(times=1, message="Container c25099ff10b5 is already paused")
    freeze_container(paused)  # type: ignore[arg-type]
    assert paused.calls == 1
