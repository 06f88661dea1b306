"""Sandbox images: the offline base image (debootstrap + docker import) and per-task images."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors

from rsr_core.models import Task
from rsr_core.settings import Settings

BASE_PACKAGES = ("python3", "python3-pytest", "tmux", "procps")
_NOT_CONTEXT = {
    "tests",
    "run-tests.sh",
    "solution",
    "solution.sh",
    "solution.yaml",
    "task.yaml",
    "task.toml",
    "instruction.md",
}
_FROM = re.compile(r"^(\s*FROM\s+)(?:--platform=\S+\s+)?(\S+)(.*)$", re.I | re.M)


class ImageError(RuntimeError):
    """An image could not be built or found."""


def image_exists(client: docker.DockerClient, name: str) -> bool:
    """Is the image present locally?"""
    try:
        client.images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False


def build_base_image(
    client: docker.DockerClient, settings: Settings, force: bool = False, log: Callable[[str], None] = print
) -> str:
    """Build `rsr-base:bookworm` offline: debootstrap a minbase rootfs, tar it (cached), docker import it."""
    name = settings.base_image
    if not force and image_exists(client, name):
        log(f"{name} is present")
        return name
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    tarball = settings.cache_dir / f"{name.replace(':', '-').replace('/', '_')}.tar"
    if force or not tarball.is_file():
        if shutil.which("debootstrap") is None:
            raise ImageError("debootstrap is not installed (apt-get install debootstrap)")
        with tempfile.TemporaryDirectory(prefix="rsr-rootfs-", dir=settings.cache_dir) as tmp:
            rootfs = Path(tmp) / "rootfs"
            log(f"debootstrap bookworm into {rootfs} (a minute or two)")
            cmd = [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(BASE_PACKAGES)}",
                "bookworm",
                str(rootfs),
                settings.debian_mirror,
            ]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise ImageError(f"debootstrap failed ({done.returncode}): {done.stderr[-2000:]}")
            for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
                for item in (rootfs / junk).glob("*"):
                    if item.is_file():
                        item.unlink()
            partial = tarball.with_suffix(".partial")
            subprocess.run(["tar", "-C", str(rootfs), "-cf", str(partial), "."], check=True)
            partial.rename(tarball)
    log(f"docker import {tarball} as {name}")
    repo, _, tag = name.partition(":")
    client.api.import_image(
        src=str(tarball),
        repository=repo,
        tag=tag or "latest",
        changes=[
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "ENV LANG=C.UTF-8",
            "WORKDIR /",
            'CMD ["/bin/bash"]',
        ],
    )
    if not image_exists(client, name):
        raise ImageError(f"docker import did not produce {name}")
    return name


def map_image(image: str, client: docker.DockerClient, mapping: dict[str, str]) -> str:
    """A local image for `image`: itself when present, else its RSR_IMAGE_MAP replacement."""
    if image_exists(client, image):
        return image
    name = image.split("@")[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    if image in mapping:
        return mapping[image]
    if repo in mapping:
        return mapping[repo]
    last = repo.rsplit("/", 1)[-1]
    for key, local in mapping.items():
        if last.startswith(key):
            return local
    raise ImageError(
        f"image {image!r} is not present and cannot be pulled offline; map it with RSR_IMAGE_MAP={repo}=LOCAL_IMAGE"
    )


def rewrite_dockerfile(text: str, client: docker.DockerClient, mapping: dict[str, str]) -> str:
    """The Dockerfile with every unavailable base image replaced by its mapped local image."""
    stages: set[str] = set()

    def repl(match: re.Match) -> str:
        image, rest = match.group(2), match.group(3)
        alias = re.search(r"\bAS\s+(\S+)", rest, re.I)
        if alias:
            stages.add(alias.group(1).lower())
        if image.lower() in stages or image.lower() == "scratch":
            return match.group(0)
        return f"{match.group(1)}{map_image(image, client, mapping)}{rest}"

    return _FROM.sub(repl, text)


def environment_context(task: Task) -> tuple[Path | None, str | None]:
    """The task's Docker build context directory and Dockerfile name (on disk), if any."""
    if task.path:
        root = Path(task.path)
        for ctx in (root / "environment", root):
            if (ctx / "Dockerfile").is_file():
                return ctx, "Dockerfile"
    return None, None


def task_image(client: docker.DockerClient, task: Task, settings: Settings) -> str:
    """Build (or reuse) the task's image; a task without a Dockerfile runs on its image or the base image."""
    ctx, dockerfile = environment_context(task)
    if ctx is None:
        return (
            map_image(task.docker_image, client, settings.image_map)
            if task.docker_image
            else settings.base_image
        )
    text = (ctx / dockerfile).read_text()
    rewritten = rewrite_dockerfile(text, client, settings.image_map)
    digest = hashlib.sha256(rewritten.encode())
    for path in sorted(p for p in ctx.rglob("*") if p.is_file()):
        digest.update(path.relative_to(ctx).as_posix().encode() + b"\0" + path.read_bytes())
    tag = f"rsr-task-{re.sub(r'[^a-z0-9_.-]', '-', task.task_id.lower())}:{digest.hexdigest()[:12]}"
    if image_exists(client, tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="rsr-ctx-") as tmp:
        build_ctx = Path(tmp) / "ctx"
        # A Terminal-Bench 1 context is the task root: its hidden tests and solution stay out of the image.
        top = str(ctx)
        shutil.copytree(
            ctx, build_ctx, ignore=lambda d, names: [n for n in names if d == top and n in _NOT_CONTEXT]
        )
        (build_ctx / "Dockerfile.rsr").write_text(rewritten)
        try:
            client.images.build(
                path=str(build_ctx),
                dockerfile="Dockerfile.rsr",
                tag=tag,
                rm=True,
                forcerm=True,
                network_mode="none",
                labels={"rsr.task": task.task_id},
            )
        except docker.errors.BuildError as exc:
            log = "".join(str(c.get("stream", c.get("error", ""))) for c in exc.build_log)[-2000:]
            raise ImageError(f"building the image of task {task.task_id} failed: {exc.msg}\n{log}") from None
    return tag
