"""A Docker container per run, hardened: no network by default, every capability dropped but a documented few,
no-new-privileges, CPU/memory/pids limits, writable-space and file-count budgets, a wall-clock budget, always removed.

The main process (PID 1) is a shell loop that ignores signals and reaps orphans, so an agent's `kill -9 -1`
or `pkill sleep` cannot end the sandbox under the harness; it exits by itself when the budget runs out, and
the container is started with auto-remove, so even a sandbox whose owner was killed goes away (`rsr sandbox
gc` sooner). A limit the run hits (a fork the pids limit refused, an OOM kill, the disk or file budget) is recorded
in `limit_reason`; harnesses end the run on it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import docker
import docker.errors
from docker.models.containers import Container

from rsr_core.errors import SandboxFailure
from rsr_core.protocols import ExecResult
from rsr_core.sandbox.archive import tar_files
from rsr_core.sandbox.channel import ChannelError, ShellChannel
from rsr_core.sandbox.fs import ContainerFS, ImageReads
from rsr_core.sandbox.labels import LABEL, OWNER_LABEL, SNAPSHOT_REPOSITORY
from rsr_core.sandbox.watchdog import DiskWatchdog, oom_killed

if TYPE_CHECKING:
    from rsr_core.models import Task
    from rsr_core.sandbox.verification import Verification

DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 1024
DEFAULT_PIDS = 256
DEFAULT_STORAGE_MB = 4096
DEFAULT_MAX_FILES = 100_000  # files and directories in the writable layer; a large npm or pip install fits
DEFAULT_BUDGET_S = 1800.0
DEFAULT_SHELL_TIMEOUT_S = 120.0
FREEZE_ATTEMPTS = 5
FREEZE_RETRY_S = 0.2
"""runc gives up freezing a cgroup whose processes do not all stop in time (processes still exiting after a
`kill -9 -1`, on a loaded machine) and reports "unable to freeze"; a later attempt finds them gone."""
# What terminal tasks need as root: own and chmod any file, write where root writes, signal processes, switch
# users (su, apt's sandbox user), bind ports below 1024. Not granted: MKNOD, NET_RAW, SETFCAP, SETPCAP,
# SYS_CHROOT, AUDIT_WRITE (Docker's defaults) and everything else; a task adds some with [environment] cap_add.
DEFAULT_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE")


def freeze_container(
    container: Container, attempts: int = FREEZE_ATTEMPTS, wait_s: float = FREEZE_RETRY_S
) -> None:
    """Pause `container` (a paused one stays paused), trying again while runc cannot freeze it in time, `wait_s`
    longer before each new attempt."""
    for attempt in range(1, attempts + 1):
        try:
            container.pause()
            return
        except docker.errors.APIError as exc:
            if "already paused" in str(exc):
                return
            if "unable to freeze" not in str(exc) or attempt == attempts:
                raise SandboxFailure(f"cannot freeze the sandbox: {exc.explanation or exc}") from None
        time.sleep(wait_s * attempt)


def keepalive(seconds: int) -> str:
    """PID 1's script: ignore signals (PID 1 gets no default handlers, so SIGKILL from inside is dropped too),
    reap orphans through `wait`, exit after `seconds`."""
    return (
        "trap '' HUP INT QUIT TERM USR1 USR2\n"
        "read s _ < /proc/uptime; s=${s%.*}\n"
        "while :; do read u _ < /proc/uptime; u=${u%.*}; "
        f"[ $((u - s)) -ge {seconds} ] && exit 0; sleep 5 & wait $! 2>/dev/null; done\n"
    )


@dataclass(frozen=True)
class Limits:
    """Resource limits of a sandbox."""

    cpus: float = DEFAULT_CPUS
    memory_mb: int = DEFAULT_MEMORY_MB
    pids: int = DEFAULT_PIDS
    network: bool = False
    budget_s: float = DEFAULT_BUDGET_S
    storage_mb: int = DEFAULT_STORAGE_MB
    max_files: int = DEFAULT_MAX_FILES
    cap_add: tuple[str, ...] = field(default_factory=tuple)


class DockerSandbox:
    """One container; use as a context manager so it is removed on success, error and interrupt."""

    def __init__(
        self,
        client: docker.DockerClient,
        image: str,
        limits: Limits = Limits(),
        labels: dict[str, str] | None = None,
        snapshot_image: str | None = None,
        override_entrypoint: bool = False,
        verifier: Callable[..., Verification] | None = None,
        image_reads: ImageReads | None = None,
    ):
        self.client = client
        # Lookups' reads of the image's own files, shared with the provider's other sandboxes (fs.py).
        self.image_reads = image_reads
        # The check `verify` runs (the provider gives rsr_core/sandbox/verification.py's).
        self.verifier = verifier
        self.snapshot_image = snapshot_image
        self.image = image
        self.limits = limits
        self.labels = {LABEL: "1", OWNER_LABEL: str(os.getpid()), **(labels or {})}
        self.override_entrypoint = override_entrypoint
        self.container: Container | None = None
        self.name = f"rsr-{uuid.uuid4().hex[:12]}"
        self.limit_reason: str | None = None
        self.frozen = False
        self._channel: ShellChannel | None = None
        self._watchdog: DiskWatchdog | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> DockerSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def start(self) -> None:
        """Create and start the container, and its disk watchdog."""
        lim = self.limits
        loop = ["sh", "-c", keepalive(int(lim.budget_s) + 60)]
        # A verifier container runs a commit of the agent's: the image's own entrypoint script is the agent's
        # to rewrite there, so it does not run.
        entrypoint = loop if self.override_entrypoint else None
        self.container = self.client.containers.run(
            self.image,
            [] if self.override_entrypoint else loop,
            entrypoint=entrypoint,
            name=self.name,
            detach=True,
            auto_remove=True,
            network_mode="bridge" if lim.network else "none",
            nano_cpus=int(lim.cpus * 1e9),
            mem_limit=f"{lim.memory_mb}m",
            memswap_limit=f"{lim.memory_mb}m",
            pids_limit=lim.pids,
            cap_drop=["ALL"],
            cap_add=sorted({*DEFAULT_CAPS, *(c.upper().removeprefix("CAP_") for c in lim.cap_add)}),
            security_opt=["no-new-privileges:true"],
            labels=self.labels,
            hostname="sandbox",
            environment={"TERM": "xterm-256color", "LANG": "C.UTF-8"},
        )
        self._watchdog = DiskWatchdog(
            self.client.api, self.container_id, lim.storage_mb, self._breach, max_files=lim.max_files
        )
        self._watchdog.start()

    def _breach(self, reason: str) -> None:
        """Called by the watchdog: freeze everything, then wake a harness blocked on the shell."""
        self.limit_reason = self.limit_reason or reason
        with contextlib.suppress(docker.errors.APIError, SandboxFailure):
            self.freeze()
        channel = self._channel
        if channel is not None:
            channel.abort()

    def remove(self) -> None:
        """Remove the container, and the image of a snapshot sandbox (idempotent).

        Also works when start() was interrupted before it returned (the container is found by name)."""
        if self._watchdog is not None:
            self._watchdog.stop()
            self._watchdog = None
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
            raise SandboxFailure("the sandbox is not running")
        return self.container

    @property
    def container_id(self) -> str:
        """The running container's id."""
        cid = self._require().id
        if cid is None:
            raise SandboxFailure("the sandbox has no container id")
        return cid

    @property
    def fs(self) -> ContainerFS:
        """Engine-side reads of this container's filesystem."""
        image_id = self._require().attrs.get("Image")
        return ContainerFS(self.client.api, self.container_id, image_id, self.image_reads)

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
        data = out if isinstance(out, bytes) else b"".join(out or ())
        return ExecResult(code if code is not None else -1, data.decode(errors="replace"))

    def shell(self, script: str, timeout_s: float = DEFAULT_SHELL_TIMEOUT_S) -> ExecResult:
        """Run a shell script through the sandbox's long-lived shell (one round trip, no new exec); output is
        stdout and stderr together. Raises SandboxFailure when no answer comes within `timeout_s` or the
        channel broke (the next call opens a new one). A fork refused by the pids limit or an OOM kill seen
        after the script sets `limit_reason`."""
        if self.frozen:
            raise SandboxFailure(self.limit_reason or "the sandbox is frozen")
        try:
            if self._channel is None:
                self._channel = ShellChannel(self.client.api, self.container_id)
            reply = self._channel.run(script, timeout_s)
        except (ChannelError, docker.errors.DockerException, OSError) as exc:
            if self._channel is not None:
                self._channel.close()
                self._channel = None
            raise SandboxFailure(self.limit_reason or str(exc)) from None
        if reply.fork_refusals and self.limit_reason is None:
            self.limit_reason = (
                f"pids limit reached: {reply.fork_refusals} fork(s) refused (limit {self.limits.pids})"
            )
        if reply.oom_kills and self.limit_reason is None:
            self.limit_reason = (
                f"out of memory: {reply.oom_kills} process(es) killed (limit {self.limits.memory_mb} MiB)"
            )
        return ExecResult(reply.exit_code, reply.output)

    def verify(self, task: Task, keep_agent: bool = False, run_tests: bool = True) -> Verification:
        """Check this run with the injected verifier (rsr_core/sandbox/verification.py): freeze it, read its diff
        from the engine, run the hidden tests in a fresh container from its commit."""
        if self.verifier is None:
            raise SandboxFailure("this sandbox has no verifier: open it through DockerSandboxProvider")
        return self.verifier(self, task, keep_agent=keep_agent, run_tests=run_tests)

    def check_limits(self) -> str | None:
        """Ask the engine (not the sandbox) whether a limit was hit: the disk and file budgets and OOM kills; sets and
        returns `limit_reason`. Used when the sandbox's own shell no longer answers."""
        if self.limit_reason is None and self.container is not None:
            with contextlib.suppress(docker.errors.DockerException, OSError, ValueError):
                if self._watchdog is not None:
                    self.limit_reason = self._watchdog.check()
                if self.limit_reason is None and oom_killed(self.client.api, self.container_id):
                    self.limit_reason = f"out of memory (limit {self.limits.memory_mb} MiB)"
        return self.limit_reason

    def put_files(self, files: Mapping[str, bytes | str], dest: str = "/", dirs: Sequence[str] = ()) -> None:
        """Copy files (relative path -> content) into the container under `dest`, creating the directories on
        the way (and the extra absolute `dirs`) from the archive itself, with no command run."""
        self._require().put_archive("/", tar_files(files, dest, dirs))

    def freeze(self) -> None:
        """Stop every process in the sandbox at once (cgroup freezer); idempotent."""
        with self._lock:
            if not self.frozen:
                freeze_container(self._require())
                self.frozen = True

    def thaw(self) -> None:
        """Let the processes run again (after a snapshot)."""
        with self._lock:
            if self.frozen and self.limit_reason is None:
                with contextlib.suppress(docker.errors.APIError):
                    self._require().unpause()
                self.frozen = False

    def diff(self) -> list[tuple[str, int]]:
        """The engine's filesystem diff of the container: (path, kind) with kind 0 changed, 1 added, 2 deleted."""
        try:
            entries = self._require().diff() or []
        except (docker.errors.DockerException, OSError) as exc:
            raise SandboxFailure(f"cannot read the sandbox's filesystem diff: {exc}") from None
        return [(str(e["Path"]), int(e["Kind"])) for e in entries]

    def snapshot(self, limits: Limits | None = None) -> DockerSandbox:
        """A new sandbox started from a commit of this one, with the image's entrypoint replaced: none of this
        sandbox's processes exist there. Commit while frozen to get a consistent picture."""
        container = self._require()
        try:
            image = container.commit(
                repository=SNAPSHOT_REPOSITORY, tag=uuid.uuid4().hex[:12], pause=not self.frozen
            )
        except (docker.errors.DockerException, OSError) as exc:
            raise SandboxFailure(f"cannot commit the sandbox: {exc}") from None
        if image.id is None:
            raise SandboxFailure("the engine gave the sandbox's commit no id")
        labels = {**self.labels, OWNER_LABEL: str(os.getpid()), "rsr.snapshot": "1"}
        snap = DockerSandbox(
            self.client, image.id, limits or self.limits, labels, image.id, override_entrypoint=True
        )
        try:
            snap.start()
        except BaseException:
            snap.remove()
            raise
        return snap
