"""Container hardening on the real engine: capabilities, no-new-privileges, an unkillable PID 1, snapshot gc."""

from __future__ import annotations

import re

import pytest

from rsr_core.models import Task
from rsr_core.sandbox.docker_sandbox import DEFAULT_CAPS, DockerSandbox, Limits
from rsr_core.sandbox.gc import gc_snapshot_images
from rsr_core.sandbox.labels import OWNER_LABEL, SNAPSHOT_REPOSITORY
from rsr_core.sandbox.provider import DockerSandboxProvider
from rsr_core.settings import Settings

BASE = "rsr-base:bookworm"
CAP_BITS = {"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6, "SETUID": 7}
CAP_BITS |= {"NET_BIND_SERVICE": 10, "SYS_PTRACE": 19}


def _cap_eff(sb: DockerSandbox) -> int:
    status = sb.exec("cat /proc/self/status").output
    return int(re.search(r"^CapEff:\s*([0-9a-f]+)$", status, re.M).group(1), 16)


def test_task_relaxations_reach_the_limits():
    task = Task(task_id="t", pids_limit=32, storage_mb=100, cap_add=["SYS_PTRACE"], memory_mb=300)
    limits = DockerSandboxProvider(None, Settings.from_env({}), budget_s=60).limits_for(task)
    assert (limits.pids, limits.storage_mb, limits.cap_add, limits.memory_mb) == (
        32,
        100,
        ("SYS_PTRACE",),
        300,
    )


@pytest.mark.docker
def test_capabilities_are_dropped_and_no_new_privileges_is_set(docker_engine):
    with DockerSandbox(docker_engine, BASE) as sb:
        assert _cap_eff(sb) == sum(1 << CAP_BITS[c] for c in DEFAULT_CAPS)
        assert re.search(r"^NoNewPrivs:\s*1$", sb.exec("cat /proc/self/status").output, re.M)
        mknod = sb.exec("mknod /tmp/null2 c 1 3")
        mount = sb.exec("mkdir -p /mnt/x && mount -t tmpfs none /mnt/x")
        assert mknod.exit_code != 0 and "not permitted" in mknod.output
        assert mount.exit_code != 0
        assert sb.exec("chown nobody /tmp && su nobody -s /bin/sh -c id").exit_code == 0  # what tasks need
        host = docker_engine.api.inspect_container(sb.container.id)["HostConfig"]
        assert host["CapDrop"] == ["ALL"] and "no-new-privileges:true" in host["SecurityOpt"]


@pytest.mark.docker
def test_a_task_can_add_a_capability(docker_engine):
    with DockerSandbox(docker_engine, BASE, Limits(cap_add=("SYS_PTRACE",))) as sb:
        assert _cap_eff(sb) & (1 << CAP_BITS["SYS_PTRACE"])


@pytest.mark.docker
def test_the_agent_cannot_kill_the_sandbox_from_inside(docker_engine):
    with DockerSandbox(docker_engine, BASE) as sb:
        sb.exec("kill -9 -1; kill -9 1; kill -TERM 1; pkill -9 sleep; sleep 1")
        sb.container.reload()
        assert sb.container.status == "running"
        assert sb.shell("echo alive").output.strip() == "alive"


@pytest.mark.docker
def test_gc_removes_snapshot_images_of_dead_owners(docker_engine):
    images = []
    try:
        for owner in ("999999", None):
            labels = {OWNER_LABEL: owner} if owner else {}
            with DockerSandbox(docker_engine, BASE, labels={**labels, "rsr.test": "gc-snapshot"}) as sb:
                images.append(sb.container.commit(repository=SNAPSHOT_REPOSITORY, tag=f"gc-test-{owner}").id)
        removed = gc_snapshot_images(docker_engine)
        assert f"{SNAPSHOT_REPOSITORY}:gc-test-999999" in removed
        left = {i.id for i in docker_engine.images.list(name=SNAPSHOT_REPOSITORY)}
        assert images[0] not in left and images[1] in left  # the live owner's image stays
    finally:
        for image in images:
            if any(i.id == image for i in docker_engine.images.list(name=SNAPSHOT_REPOSITORY)):
                docker_engine.images.remove(image, force=True)
