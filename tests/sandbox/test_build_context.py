"""A task image's build context holds nothing from outside the task, on the real Docker engine."""

from __future__ import annotations

import os
import re
import uuid

import pytest

from rsr_core.harness.discover import TaskNotFound, resolve_task
from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.sandbox.images import ImageError, task_image
from rsr_core.settings import Settings
from tests.ingest.hostile import harbor_task

pytestmark = pytest.mark.docker


@pytest.fixture
def built(docker_engine):
    """Tags built by a test, removed afterwards."""
    tags: list[str] = []
    yield tags
    for tag in dict.fromkeys(tags):
        docker_engine.images.remove(tag, force=True)


def _task(tmp_path, name: str):
    """A harbor task whose environment links inside the task, and a host secret beside it."""
    secret = f"HOST-SECRET-{uuid.uuid4().hex}"
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(secret + "\n")
    task = harbor_task(tmp_path / name, name=f"{name}-{uuid.uuid4().hex[:8]}")
    env = task / "environment"
    (env / "sub").mkdir()
    os.symlink("data.csv", env / "alias.csv")  # inside the context: stays a link
    os.symlink("../data.csv", env / "sub" / "up.csv")
    (task / "shared").mkdir()
    (task / "shared" / "notes.txt").write_text("shared notes\n")
    os.symlink("../shared", env / "shared")  # in the task, outside the context: its content is copied
    return task, secret


def _labelled(client, task_id: str) -> list:
    return client.images.list(filters={"label": f"rsr.task={task_id}"})


def _run(client, tag: str, script: str) -> str:
    out = client.containers.run(tag, ["sh", "-c", script], remove=True, network_mode="none")
    return out.decode()


def test_links_inside_the_task_are_built_and_no_host_file_is(docker_engine, built, tmp_path):
    task_dir, secret = _task(tmp_path, "ctx-ok")
    task = read_harbor_task(task_dir)
    tag = task_image(docker_engine, task, Settings.from_env())
    built.append(tag)
    listing = _run(docker_engine, tag, "cd /ctx && find . | sort && readlink alias.csv sub/up.csv")
    assert listing.splitlines() == [
        ".",
        "./Dockerfile",
        "./Dockerfile.rsr",
        "./alias.csv",
        "./data.csv",
        "./shared",
        "./shared/notes.txt",
        "./sub",
        "./sub/up.csv",
        "data.csv",
        "../data.csv",
    ]
    assert _run(docker_engine, tag, "cat /ctx/sub/up.csv /ctx/shared/notes.txt") == (
        "name,value\na,1\nshared notes\n"
    )
    assert secret not in _run(docker_engine, tag, "cat $(find /ctx -type f) 2>&1")
    assert task_image(docker_engine, task, Settings.from_env()) == tag  # the same context, the same tag


@pytest.mark.parametrize(
    ("link", "target", "problem"),
    [
        ("environment/host_secret", "../../outside/secret.txt", "outside the task"),
        ("environment/etc", "/etc", "outside the task"),
        ("environment/leak.py", "../tests/test_outputs.py", "symlink to the task's hidden tests or solution"),
        ("environment/gone", "nowhere", "dangling symlink to nowhere"),
    ],
)
def test_a_link_out_of_the_context_added_after_ingest_refuses_the_build(
    docker_engine, tmp_path, link, target, problem
):
    task_dir, _ = _task(tmp_path, "ctx-bad")
    task = read_harbor_task(task_dir)  # ingested while sound
    os.symlink(target, task_dir / link)
    with pytest.raises(ImageError) as refused:
        task_image(docker_engine, task, Settings.from_env())
    message = str(refused.value)
    assert message.startswith(f"task {task.task_id}: {link}: ") and problem in message
    assert message.endswith("not copied into the build context")
    assert _labelled(docker_engine, task.task_id) == []


@pytest.mark.timeout(120)
def test_nothing_outside_the_task_is_opened(docker_engine, tmp_path):
    task_dir, _ = _task(tmp_path, "ctx-fifo")
    task = read_harbor_task(task_dir)
    os.mkfifo(tmp_path / "outside" / "pipe")  # opening it would block the build (and the test) forever
    os.symlink("../../outside/pipe", task_dir / "environment" / "pipe")
    with pytest.raises(
        ImageError, match=re.escape("environment/pipe: symlink to ../../outside/pipe resolves to")
    ):
        task_image(docker_engine, task, Settings.from_env())


def test_an_environment_that_is_a_link_out_of_the_task_is_refused(docker_engine, tmp_path):
    task_dir, _ = _task(tmp_path, "ctx-env")
    task = read_harbor_task(task_dir)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "Dockerfile").write_text("FROM rsr-base:bookworm\nCOPY . /ctx/\n")
    os.rename(task_dir / "environment", tmp_path / "old-env")
    os.symlink(tmp_path / "elsewhere", task_dir / "environment")
    with pytest.raises(ImageError, match=r"environment/ resolves to .*outside the task directory"):
        task_image(docker_engine, task, Settings.from_env())


def test_discover_refuses_a_task_dir_with_a_link_out_of_it(store, tmp_path):
    task_dir, _ = _task(tmp_path, "ctx-discover")
    os.symlink("/etc/shadow", task_dir / "environment" / "shadow_link")
    with pytest.raises(TaskNotFound, match="environment/shadow_link: symlink to /etc/shadow"):
        resolve_task(store, str(task_dir))


def test_a_rebuilt_base_image_builds_the_task_image_again(docker_engine, built, tmp_path):
    """The tag covers the ids of the images a task builds on: a base rebuilt under the same name (new packages,
    a trimmed rootfs) is not hidden by the task image cached from the old one."""
    base = f"rsr-test-base-{uuid.uuid4().hex[:8]}:x"
    built.append(base)
    task_dir = harbor_task(tmp_path / "on-base", name=f"on-base-{uuid.uuid4().hex[:8]}")
    (task_dir / "environment" / "Dockerfile").write_text(f"FROM {base}\nCOPY . /ctx/\n")
    task = read_harbor_task(task_dir)
    docker_engine.images.get("rsr-base:bookworm").tag(base)
    first = task_image(docker_engine, task, Settings.from_env())
    built.append(first)
    box = docker_engine.containers.run(
        "rsr-base:bookworm", ["sh", "-c", "echo v2 > /base-version"], detach=True
    )
    box.wait()
    box.commit(*base.split(":"))
    box.remove()
    second = task_image(docker_engine, task, Settings.from_env())
    built.append(second)
    assert second != first
    assert _run(docker_engine, second, "cat /base-version") == "v2\n"
