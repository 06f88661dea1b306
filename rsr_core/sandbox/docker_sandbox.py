"""A Docker container per run: no network by default, CPU/memory/pids limits, a wall-clock budget, always removed."""

from __future__ import annotations

import contextlib
import io
import os
import tarfile
import time
import uuid
from dataclasses import dataclass
from pathlib import PurePosixPath

import docker
import docker.errors
from docker.models.containers import Container

from rsr_core.sandbox.channel import ChannelError, ShellChannel

LABEL = "rsr.sandbox"
DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 1024
DEFAULT_PIDS = 256
DEFAULT_BUDGET_S = 1800.0


@dataclass(frozen=True)
class ExecResult:
    """Exit code and combined output of a command run in the sandbox."""

    exit_code: int
    output: str

    @property
    def timed_out(self) -> bool:
        """`timeout` ended the command."""
        return self.exit_code in (124, 137)


@dataclass(frozen=True)
class Limits:
    """Resource limits of a sandbox."""

    cpus: float = DEFAULT_CPUS
    memory_mb: int = DEFAULT_MEMORY_MB
    pids: int = DEFAULT_PIDS
    network: bool = False
    budget_s: float = DEFAULT_BUDGET_S


class DockerSandbox:
    """One container; use as a context manager so it is removed on success, error and interrupt.

    The container's main process is `sleep <budget>`, and it is started with auto-remove, so even a
    container whose owner was killed removes itself when the budget runs out (`rsr sandbox gc` sooner).
    """

    def __init__(
        self,
        client: docker.DockerClient,
        image: str,
        limits: Limits = Limits(),
        labels: dict[str, str] | None = None,
        snapshot_image: str | None = None,
    ):
        self.client = client
        self.snapshot_image = snapshot_image
        self.image = image
        self.limits = limits
        self.labels = {LABEL: "1", "rsr.owner_pid": str(os.getpid()), **(labels or {})}
        self.container: Container | None = None
        self.name = f"rsr-{uuid.uuid4().hex[:12]}"
        self._channel: ShellChannel | None = None

    def __enter__(self) -> DockerSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def start(self) -> None:
        """Create and start the container."""
        lim = self.limits
        self.container = self.client.containers.run(
            self.image,
            ["sleep", str(int(lim.budget_s) + 60)],
            name=self.name,
            detach=True,
            auto_remove=True,
            init=True,
            network_mode="bridge" if lim.network else "none",
            nano_cpus=int(lim.cpus * 1e9),
            mem_limit=f"{lim.memory_mb}m",
            memswap_limit=f"{lim.memory_mb}m",
            pids_limit=lim.pids,
            labels=self.labels,
            hostname="sandbox",
            environment={"TERM": "xterm-256color", "LANG": "C.UTF-8"},
        )

    def remove(self) -> None:
        """Remove the container, and the image of a snapshot sandbox (idempotent).

        Also works when start() was interrupted before it returned (the container is found by name)."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        container = self.container
        if container is None:
            try:
                container = self.client.containers.get(self.name)
            except docker.errors.NotFound:
                container = None
        if container is not None:
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                if "already in progress" not in str(exc) and exc.status_code != 409:
                    raise
            self.container = None
        if self.snapshot_image:
            with contextlib.suppress(docker.errors.APIError):
                self.client.images.remove(self.snapshot_image, force=True)
            self.snapshot_image = None

    def _require(self) -> Container:
        if self.container is None:
            raise RuntimeError("sandbox is not running")
        return self.container

    def exec(
        self,
        cmd: str | list[str],
        timeout_s: float | None = None,
        workdir: str | None = None,
        environment: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run a command (a shell string runs under bash -c); `timeout_s` ends it with `timeout`."""
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if timeout_s is not None:
            argv = ["timeout", "-k", "5", str(max(1, int(timeout_s))), *argv]
        code, out = self._require().exec_run(argv, workdir=workdir, environment=environment, demux=False)
        return ExecResult(code if code is not None else -1, (out or b"").decode(errors="replace"))

    def shell(self, script: str) -> ExecResult:
        """Run a shell script through the sandbox's long-lived shell (one round trip, no new exec); output is
        stdout and stderr together. A broken channel raises ChannelError (the next call opens a new one)."""
        if self._channel is None:
            self._channel = ShellChannel(self.client.api, self._require().id)
        try:
            code, output = self._channel.run(script)
        except ChannelError:
            self._channel.close()
            self._channel = None
            raise
        return ExecResult(code, output)

    def put_files(self, files: dict[str, bytes | str], dest: str = "/", dirs: tuple[str, ...] = ()) -> None:
        """Copy files (relative path -> content) into the container under `dest`, creating the directories on
        the way (and the extra absolute `dirs`) from the archive itself, with no command run."""
        base = PurePosixPath(dest.strip("/") or ".")
        now = int(time.time())
        entries: dict[str, bytes | None] = {}
        for rel, content in files.items():
            path = base / PurePosixPath(rel)
            for parent in reversed(path.parents):
                if str(parent) != ".":
                    entries.setdefault(str(parent), None)
            entries[str(path)] = content.encode() if isinstance(content, str) else content
        for extra in dirs:
            for part in [*reversed(PurePosixPath(extra.strip("/")).parents), PurePosixPath(extra.strip("/"))]:
                if str(part) != ".":
                    entries.setdefault(str(part), None)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, data in entries.items():
                info = tarfile.TarInfo(name)
                info.mtime = now
                if data is None:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
                else:
                    info.size = len(data)
                    info.mode = 0o755 if name.endswith(".sh") else 0o644
                    tar.addfile(info, io.BytesIO(data))
        self._require().put_archive("/", buf.getvalue())

    def snapshot(self) -> DockerSandbox:
        """A new sandbox started from a commit of this one (processes are not carried over)."""
        image = self._require().commit(repository="rsr-snapshot", tag=uuid.uuid4().hex[:12])
        snap = DockerSandbox(
            self.client, image.id, self.limits, {**self.labels, "rsr.snapshot": "1"}, image.id
        )
        try:
            snap.start()
        except BaseException:
            snap.remove()
            raise
        return snap


def gc_containers(
    client: docker.DockerClient, everything: bool = False, job_id: str | None = None
) -> list[str]:
    """Remove sandbox containers whose owner process is gone (or all / those of a job); returns their names."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        labels = container.labels or {}
        owner = labels.get("rsr.owner_pid")
        alive = owner is not None and owner.isdigit() and _pid_alive(int(owner))
        if everything or (job_id and labels.get("rsr.job") == job_id) or not alive:
            try:
                container.remove(force=True)
                removed.append(container.name)
            except docker.errors.APIError:
                pass
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
