"""Verifying a run with nothing of the agent's left running: freeze, diff, commit, verify in a fresh container.

The agent is root in its sandbox, so stopping its processes one by one (the tmux session, background jobs,
nohup'd loops, processes that ignore SIGTERM, a fork bomb outrunning `kill`) is a race the verifier could
lose. Instead the agent's container is frozen (the cgroup freezer stops every process at once), its
filesystem diff is read from the engine and checked for changes to the verifier's ground (integrity.py),
and the container is committed; before the tests, the library names the loader resolves are compared with the
image's (loader_check.py); the hidden tests then run in a new container started from that commit with
the image's entrypoint replaced by the keepalive loop. A commit carries the filesystem and nothing else: no
process can survive it. What it does not carry either: tmpfs mounts (the sandbox mounts none besides the
engine's own /dev/shm, so files the agent left in /dev/shm are not seen by the tests) and the engine-managed
/etc/hosts, /etc/hostname and /etc/resolv.conf (the verifier's container gets its own). A service the tests
need running must be started by the tests: processes never carry over. At the end of a run the agent's
container is removed as soon as it is committed; for an RSRT claim it is thawed and the run goes on. When
the tests end, every process of the verifier's container but its PID 1 is killed, the container is frozen and
the engine confirms nothing else is left, before the reward is read (verifier.py).
"""

from __future__ import annotations

import dataclasses
import tarfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

import docker.errors

from rsr_core.errors import SandboxFailure
from rsr_core.models import ChangedPath, Task
from rsr_core.sandbox.integrity import IntegrityReport, check_integrity, wrote_bytecode
from rsr_core.sandbox.loader_check import image_cache, loader_ground, needs_check
from rsr_core.sandbox.verifier import DEFAULT_VERIFIER_TIMEOUT_S, VerifierResult, image_config, run_verifier

if TYPE_CHECKING:  # the sandbox calls this module to verify itself
    from rsr_core.sandbox.docker_sandbox import DockerSandbox

VERIFIER_BUDGET_SLACK_S = 300.0


@dataclass(frozen=True)
class Verification:
    """The tests' result (None when they did not run) and what the run changed on disk."""

    result: VerifierResult | None
    integrity: IntegrityReport

    @property
    def tampered(self) -> bool:
        """The run changed the verifier's ground."""
        return self.integrity.tampered

    @property
    def reward(self) -> float | None:
        """The reward as measured (kept even when tampered; the store never counts such a run as solved)."""
        return self.result.reward if self.result else None

    @property
    def passed(self) -> bool:
        """The tests passed and the run left the verifier's ground alone."""
        return self.result is not None and self.result.passed and not self.tampered

    @property
    def changed_paths(self) -> list[ChangedPath]:
        """What the run changed on disk, as stored (capped; every verifier-ground entry kept)."""
        return self.integrity.changed_paths

    @property
    def inconsistent(self) -> str | None:
        """Why the tests' reward of 1 was not kept: the verifier's pytest record contradicts it."""
        return self.result.inconsistent if self.result else None

    def extra(self) -> dict:
        """Facts of the check kept with the trajectory (the full count of changes, the pytest record's verdict,
        …)."""
        return {**self.integrity.extra(), **(self.result.extra if self.result else {})}

    @property
    def output(self) -> str | None:
        """The verifier's output, with a line naming the ground the run changed."""
        text = self.result.output if self.result else None
        if self.tampered:
            shown = ", ".join(self.integrity.ground[:10])
            more = len(self.integrity.ground) - 10
            note = f"[verifier] the run changed the verifier's ground: {shown}" + (
                f" (+{more})" if more > 0 else ""
            )
            text = f"{text}\n{note}" if text else note
        return text


def verify_run(
    sandbox: DockerSandbox, task: Task, keep_agent: bool = False, run_tests: bool = True
) -> Verification:
    """Freeze the agent's sandbox, check its diff, and (unless `run_tests` is false) run the hidden tests in a
    fresh container from its commit. The agent's container is removed before the tests start, or thawed
    again with `keep_agent` (an RSRT claim). Raises SandboxFailure when the container cannot be read."""
    sandbox.freeze()
    try:
        try:
            env, workdir = image_config(sandbox)
            report = check_integrity(sandbox.diff(), sandbox.fs, task, env, workdir)
        except (docker.errors.DockerException, OSError, tarfile.TarError) as exc:
            raise SandboxFailure(f"cannot read the sandbox's filesystem: {exc}") from None
        if not run_tests:
            return Verification(None, report)
        budget = (task.verifier_timeout_sec or DEFAULT_VERIFIER_TIMEOUT_S) + VERIFIER_BUDGET_SLACK_S
        verifier = sandbox.snapshot(dataclasses.replace(sandbox.limits, budget_s=budget))
    finally:
        if keep_agent:
            sandbox.thaw()
    try:
        if not keep_agent:
            sandbox.remove()
        if needs_check(report.changed):
            report.add_ground(loader_ground(image_cache(sandbox), verifier, report.changed), task)
        result = run_verifier(verifier, task, image_bytecode=not wrote_bytecode(report.changed))
    finally:
        verifier.remove()
    return Verification(result, report)
