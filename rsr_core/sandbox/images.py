"""Sandbox images: the offline base image (debootstrap + docker import) and per-task images."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import docker
import docker.errors

from rsr_core.errors import RsrError
from rsr_core.models import Task
from rsr_core.settings import Settings
from rsr_core.system import inside

BASE_PACKAGES = (
    "python3",
    "python3-pytest",
    "tmux",
    "procps",
    # text tools an agent may reach for: the answer-transfer replay runs commands on this image, and a value a
    # command would print with a tool the image lacked could not come out of the replay
    "bc",
    "bsdextrautils",
    "bzip2",
    "dc",
    "ed",
    "jq",
    "openssl",
    "xxd",
    "xz-utils",
)
PACKAGES_LABEL = "rsr.base-packages"
"""The label that names the packages an imported base image holds (a digest of BASE_PACKAGES and TRIMMED)."""
TRIMMED = ("usr/share/doc", "usr/share/info", "usr/share/locale", "usr/share/man")
"""Directories of the rootfs emptied after debootstrap, as slim Debian images do (the copyright files and the
files directly in them are kept). Nothing in a sandbox reads them, and the engine's `docker diff`, which each
verification asks for, walks the container's whole tree: its cost follows the number of paths."""
_DPKG_TRIM = (
    "".join(f"path-exclude=/{d}/*/*\n" for d in TRIMMED) + "path-include=/usr/share/doc/*/copyright\n"
)


def packages_digest() -> str:
    """A short digest of BASE_PACKAGES and TRIMMED: it names the cached rootfs and labels the image built from
    it, so a change of either builds both again."""
    return hashlib.sha256(",".join(BASE_PACKAGES + TRIMMED).encode()).hexdigest()[:12]


def trim_rootfs(rootfs: Path) -> None:
    """Empty the TRIMMED directories of `rootfs` (keeping each package's copyright and the files directly in
    them) and tell dpkg to leave them empty for anything installed later."""
    for name in TRIMMED:
        top = rootfs / name
        if not top.is_dir():
            continue
        keep = "copyright" if name == "usr/share/doc" else None
        for entry in top.iterdir():
            if entry.is_symlink() or not entry.is_dir():
                continue
            for item in entry.iterdir():
                if item.name == keep:
                    continue
                if item.is_dir() and not item.is_symlink():
                    shutil.rmtree(item)
                else:
                    item.unlink()
            if not any(entry.iterdir()):
                entry.rmdir()
    conf = rootfs / "etc/dpkg/dpkg.cfg.d"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "rsr-trim").write_text(_DPKG_TRIM)


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
MAX_CONTEXT_BYTES = 4 * 2**30
"""The most bytes a task's build context may copy: a sparse file, hard links to one big file or links to one
directory named many times would otherwise fill the disk with the copy (and the engine with the build)."""
MAX_CONTEXT_ENTRIES = 100_000
"""The most files, directories and links a build context may copy (directories linking twice to the next,
thirty deep, are a billion copies of nothing)."""
_FROM = re.compile(r"^(\s*FROM\s+)(?:--platform=\S+\s+)?(\S+)(.*)$", re.I | re.M)


class ImageError(RsrError):
    """An image could not be built or found."""


def image_exists(client: docker.DockerClient, name: str) -> bool:
    """Is the image present locally?"""
    return _image_id(client, name) is not None


def _image_id(client: docker.DockerClient, name: str) -> str | None:
    """The id of the local image `name`, None when it is not present."""
    try:
        return str(client.images.get(name).id)
    except docker.errors.ImageNotFound:
        return None


def tarball_path(settings: Settings) -> Path:
    """Where the base image's rootfs tarball is cached (debootstrap's output, `docker import`'s input)."""
    name = settings.base_image
    return settings.cache_dir / f"{name.replace(':', '-').replace('/', '_')}-{packages_digest()}.tar"


def base_is_current(client: docker.DockerClient, name: str) -> bool:
    """Is the base image present and built from today's BASE_PACKAGES?"""
    try:
        labels = client.images.get(name).labels or {}
    except docker.errors.ImageNotFound:
        return False
    return labels.get(PACKAGES_LABEL) == packages_digest()


def build_base_image(
    client: docker.DockerClient, settings: Settings, force: bool = False, log: Callable[[str], None] = print
) -> str:
    """Build `rsr-base:bookworm` offline: debootstrap a minbase rootfs, tar it (cached), docker import it."""
    name = settings.base_image
    if not force and base_is_current(client, name):
        log(f"{name} is present")
        return name
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    tarball = tarball_path(settings)
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
            trim_rootfs(rootfs)
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
            f"LABEL {PACKAGES_LABEL}={packages_digest()}",
        ],
    )
    if not image_exists(client, name):
        raise ImageError(f"docker import did not produce {name}")
    return name


def map_image(image: str, client: docker.DockerClient, mapping: dict[str, str]) -> str:
    """A local image for `image`: itself when present, else its RSR_IMAGE_MAP replacement."""
    return _local_image(image, client, mapping)[0]


def _local_image(image: str, client: docker.DockerClient, mapping: dict[str, str]) -> tuple[str, str | None]:
    """`map_image` and the id of the image it names (None when a replacement is not present either)."""
    found = _image_id(client, image)
    if found is not None:
        return image, found
    name = image.split("@")[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    if image in mapping:
        return mapping[image], _image_id(client, mapping[image])
    if repo in mapping:
        return mapping[repo], _image_id(client, mapping[repo])
    last = repo.rsplit("/", 1)[-1]
    for key, local in mapping.items():
        if last.startswith(key):
            return local, _image_id(client, local)
    raise ImageError(
        f"image {image!r} is not present and cannot be pulled offline; map it with RSR_IMAGE_MAP={repo}=LOCAL_IMAGE"
    )


def rewrite_dockerfile(
    text: str, client: docker.DockerClient, mapping: dict[str, str], used: list[str | None] | None = None
) -> str:
    """The Dockerfile with every unavailable base image replaced by its mapped local image (the id of each
    local image it builds on appended to `used`, None for one that is not present)."""
    stages: set[str] = set()

    def repl(match: re.Match) -> str:
        image, rest = match.group(2), match.group(3)
        alias = re.search(r"\bAS\s+(\S+)", rest, re.I)
        if alias:
            stages.add(alias.group(1).lower())
        if image.lower() in stages or image.lower() == "scratch":
            return match.group(0)
        local, image_id = _local_image(image, client, mapping)
        if used is not None:
            used.append(image_id)
        return f"{match.group(1)}{local}{rest}"

    return _FROM.sub(repl, text)


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def environment_context(task: Task) -> Path | None:
    """The task's Docker build context directory (holding a `Dockerfile`), if any.

    A context that resolves outside the task directory (an `environment` link leading away) is an
    ImageError: nothing outside a task may be built into its image."""
    if task.path:
        root = Path(task.path)
        for ctx in (root / "environment", root):
            if not os.path.lexists(ctx / "Dockerfile"):
                continue
            if not inside(_real(ctx), _real(root)):
                raise ImageError(
                    f"task {task.task_id}: {ctx.name}/ resolves to {_real(ctx)}, outside the task directory; "
                    "not used as a build context"
                )
            return ctx
    return None


class _ContextCopy:
    """Copies a build context without ever following a link out of the task.

    A link whose target is inside the context is copied as a link (to the same place in the copy); a link to
    a file or directory elsewhere in the task is copied as its target's content; a link that resolves
    outside the task, dangles, or leads to the task's hidden tests or solution is an ImageError, as is a
    special file (a FIFO would block the copy).
    """

    def __init__(self, ctx: Path, task_root: Path, task_id: str):
        self.ctx, self.root, self.task_id = _real(ctx), _real(task_root), task_id
        self.hidden = [self.root / name for name in _NOT_CONTEXT]
        self.dest = Path()
        self._copying: set[Path] = set()
        # A directory outside the context reached through links is the same whichever link leads to it: the
        # dry pass counts it once and adds its totals at every later link (directories linking twice to the
        # next, thirty deep, are refused after a few dozen entries, not after walking 100,000 of them).
        self._totals: dict[Path, tuple[int, int]] = {}
        self._bytes = 0
        self._entries = 0
        self._dry = False

    def copy_to(self, dest: Path) -> None:
        """Copy the context into `dest` (which must not exist), after a first pass that copies nothing and
        checks the whole context against the limits (nothing is written for a context that is refused)."""
        self.dest = dest
        self._dry = True
        self._dir(self.ctx, dest)
        self._dry, self._bytes, self._entries = False, 0, 0
        self._dir(self.ctx, dest)

    def _refuse(self, src: Path, problem: str) -> ImageError:
        try:
            shown = src.relative_to(self.root).as_posix()
        except ValueError:
            shown = str(src)
        return ImageError(f"task {self.task_id}: {shown}: {problem}; not copied into the build context")

    def _count(self, src: Path, size: int, entries: int = 1) -> None:
        """Account for `entries` more entries of `size` bytes; refuse a context that grows past the limits."""
        self._entries += entries
        self._bytes += size
        if self._entries > MAX_CONTEXT_ENTRIES:
            raise self._refuse(
                src,
                f"the build context would hold more than {MAX_CONTEXT_ENTRIES:,} files, directories and links",
            )
        if self._bytes > MAX_CONTEXT_BYTES:
            raise self._refuse(
                src,
                f"the build context would hold more than {MAX_CONTEXT_BYTES:,} bytes (a sparse file, or a file "
                "or directory copied many times?)",
            )

    def _dir(self, src: Path, dest: Path) -> None:
        if not self._dry:
            dest.mkdir()
        with os.scandir(src) as it:
            children = sorted(it, key=lambda e: e.name)
        for child in children:
            path = Path(child.path)
            if path in self.hidden:
                continue  # a Terminal-Bench 1 context is the task root: its hidden files stay out
            info = child.stat(follow_symlinks=False)
            mode = info.st_mode
            self._count(path, info.st_size if stat.S_ISREG(mode) else 0)
            if stat.S_ISLNK(mode):
                self._link(path, dest / child.name)
            elif stat.S_ISDIR(mode):
                self._dir(path, dest / child.name)
            elif stat.S_ISREG(mode):
                if not self._dry:
                    shutil.copy2(path, dest / child.name, follow_symlinks=False)
            else:
                raise self._refuse(path, "a special file (FIFO, socket or device)")

    def _link(self, src: Path, dest: Path) -> None:
        target = _real(src)
        if not inside(target, self.root):
            raise self._refuse(src, f"symlink to {os.readlink(src)} resolves to {target}, outside the task")
        if not os.path.exists(src):
            raise self._refuse(src, f"dangling symlink to {os.readlink(src)}")
        if any(inside(target, hidden) for hidden in self.hidden):
            raise self._refuse(src, "symlink to the task's hidden tests or solution")
        if inside(target, self.ctx):
            place = self.dest / target.relative_to(self.ctx)
            if not self._dry:
                os.symlink(os.path.relpath(place, dest.parent), dest)
        elif target.is_dir():
            if target in self._copying:
                raise self._refuse(src, "symlink loop")
            if self._dry and target in self._totals:
                # Counted whole before: no loop below it, whatever path leads here (one would run through it).
                entries, size = self._totals[target]
                self._count(src, size, entries)
                return
            before = (self._entries, self._bytes)
            self._copying.add(target)
            self._dir(target, dest)
            self._copying.discard(target)
            if self._dry:
                self._totals[target] = (self._entries - before[0], self._bytes - before[1])
        else:
            self._link_file(src, target, dest)

    def _link_file(self, src: Path, target: Path, dest: Path) -> None:
        info = os.stat(target)
        if not stat.S_ISREG(info.st_mode):
            raise self._refuse(src, "symlink to a special file (FIFO, socket or device)")
        self._count(src, info.st_size)
        if not self._dry:
            shutil.copy2(target, dest, follow_symlinks=False)


class Digest(Protocol):
    """What a hashlib hash offers that the context digest uses."""

    def update(self, data: bytes, /) -> None:
        """Feed bytes."""
        ...


def context_digest(directory: Path, digest: Digest) -> None:
    """Add a copied build context to `digest`: paths, file bytes and modes, link texts; links not followed."""
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = base / name
            rel = path.relative_to(directory).as_posix().encode()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                digest.update(b"L" + rel + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
            elif stat.S_ISREG(info.st_mode):
                digest.update(b"F" + rel + b"\0" + oct(stat.S_IMODE(info.st_mode)).encode() + b"\0")
                digest.update(path.read_bytes())
            else:
                digest.update(b"D" + rel + b"\0")


def task_image(client: docker.DockerClient, task: Task, settings: Settings) -> str:
    """Build (or reuse) the task's image; a task without a Dockerfile runs on its image or the base image.

    The build context is a copy that holds nothing from outside the task (see `_ContextCopy`); the image tag
    is a digest of that copy, the rewritten Dockerfile and the ids of the images it builds on, so computing it
    reads nothing outside them."""
    ctx = environment_context(task)
    if ctx is None:
        return (
            map_image(task.docker_image, client, settings.image_map)
            if task.docker_image
            else settings.base_image
        )
    with tempfile.TemporaryDirectory(prefix="rsr-ctx-") as tmp:
        build_ctx = Path(tmp) / "ctx"
        try:
            _ContextCopy(ctx, Path(task.path or ctx), task.task_id).copy_to(build_ctx)
        except OSError as exc:
            raise ImageError(f"task {task.task_id}: cannot copy the build context: {exc}") from None
        # Read from the copy, where every link stays inside the copy.
        text = (build_ctx / "Dockerfile").read_text()
        bases: list[str | None] = []
        rewritten = rewrite_dockerfile(text, client, settings.image_map, bases)
        digest = hashlib.sha256(rewritten.encode())
        for base_id in bases:  # a rebuilt base image (new packages) builds the task's image again
            digest.update(b"B" + (base_id or "").encode() + b"\0")
        context_digest(build_ctx, digest)
        tag = f"rsr-task-{re.sub(r'[^a-z0-9_.-]', '-', task.task_id.lower())}:{digest.hexdigest()[:12]}"
        if image_exists(client, tag):
            return tag
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
