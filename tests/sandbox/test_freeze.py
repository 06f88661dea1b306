"""Freezing a sandbox when runc cannot stop its processes in time (seen on a loaded machine right after the
verifier's `kill -9 -1`): tried again a bounded number of times, and any other refusal is reported at once. On
real containers of the engine; the engine cannot be made to fail a freeze on demand, so `Refusing` answers
the first pauses with its wording (Docker 20.10, runc on cgroup v1) before the real one runs."""

from __future__ import annotations

import contextlib

import docker.errors
import pytest
from docker.models.containers import Container

from rsr_core.errors import SandboxFailure
from rsr_core.sandbox.docker_sandbox import freeze_container

pytestmark = pytest.mark.docker
UNABLE = "Cannot pause container c25099ff10b5: OCI runtime pause failed: unable to freeze: unknown"


class Refusing:
    """`container`, whose first `times` pauses are refused as runc refuses a freeze it could not finish."""

    def __init__(self, container: Container, times: int) -> None:
        self.container, self.times, self.calls = container, times, 0

    def pause(self) -> None:
        self.calls += 1
        if self.calls <= self.times:
            raise docker.errors.APIError(UNABLE, explanation=UNABLE)
        self.container.pause()


@pytest.fixture
def container(docker_engine):
    c = docker_engine.containers.run("rsr-base:bookworm", ["sleep", "300"], detach=True, network_mode="none")
    yield c
    with contextlib.suppress(docker.errors.NotFound):  # one test removes it itself
        c.remove(force=True)


def _paused(container: Container) -> bool:
    container.reload()
    return bool(container.attrs["State"]["Paused"])


def test_a_freeze_runc_could_not_finish_is_tried_again(container):
    refusing = Refusing(container, times=2)
    freeze_container(refusing, wait_s=0.0)  # type: ignore[arg-type]
    assert refusing.calls == 3 and _paused(container)


def test_a_freeze_that_never_succeeds_fails_after_the_last_attempt(container):
    refusing = Refusing(container, times=99)
    with pytest.raises(SandboxFailure, match=r"cannot freeze the sandbox: .*unable to freeze"):
        freeze_container(refusing, attempts=4, wait_s=0.0)  # type: ignore[arg-type]
    assert refusing.calls == 4 and not _paused(container)


def test_a_paused_container_stays_paused_and_a_gone_one_fails_at_once(container):
    container.pause()
    freeze_container(container)  # the engine's "already paused"
    assert _paused(container)
    container.remove(force=True)
    with pytest.raises(SandboxFailure, match="cannot freeze the sandbox: No such container"):
        freeze_container(container)
