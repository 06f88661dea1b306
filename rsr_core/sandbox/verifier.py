"""The hidden-test verifier: tests are copied in only after the agent has finished, into a place made anew.

`run_verifier` runs the tests in the sandbox it is given; harnesses give it a fresh container started from a
commit of the agent's (see verification.py), so no agent process exists there. Before the tests, `/tests`
and `/logs/verifier` are removed (and `/logs` when it is not a plain directory) and the engine confirms they
are gone, then the hidden files are unpacked by the engine. The tests run with a clean environment: `env -i`
with the image's own environment (its PATH included; the agent cannot change a container's configuration),
`bash --noprofile --norc` (no BASH_ENV, profile or rc file), a fresh PYTHONPYCACHEPREFIX when the run wrote
bytecode (none the agent left is read; a run that wrote none leaves only the image's, which the tests then use
instead of compiling every module they import) and SETUPTOOLS_USE_DISTUTILS=stdlib (setuptools' .pth hook
imports nothing). When they end every process of the container but its PID 1 keepalive is SIGKILLed, the
container is frozen and the engine's process list confirms nothing else is left, so nothing they started can
write the reward afterwards; only then are the reward files read through the engine (reward.py). The
verifier's own pytest plugin (pytest_verdict.py) gives a second verdict: a reward of 1 that its record
contradicts counts as 0, with the reason.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import time
import uuid
from dataclasses import dataclass, field

import docker.errors

from rsr_core.errors import SandboxFailure
from rsr_core.models import Task
from rsr_core.sandbox.docker_sandbox import DockerSandbox
from rsr_core.sandbox.pytest_verdict import MAX_RECORD_BYTES, VerdictPlugin, new_plugin, parse_record
from rsr_core.sandbox.reward import read_reward
from rsr_core.store.rules import solved

DEFAULT_VERIFIER_TIMEOUT_S = 600.0
SHELL_SLACK_S = 60.0
_SUMMARY = re.compile(r"=+ (.*?) in [\d.]+s", re.M)
_COUNT = re.compile(r"(\d+) (passed|failed|error|errors|xfailed|xpassed|skipped)")
_LINE = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)", re.M)
CLEAR = (
    "rm -rf /tests /logs/verifier; "
    "if [ -L /logs ] || { [ -e /logs ] && [ ! -d /logs ]; }; then rm -f /logs; fi"
)


@dataclass(frozen=True)
class VerifierResult:
    """Reward in [0, 1] (None: the tests named no reward) and what the tests printed; `inconsistent` says why a
    reward of 1 was not kept (the verifier's pytest record contradicts it), `extra` what the run's trajectory
    keeps of the check."""

    reward: float | None
    output: str
    passed: bool
    inconsistent: str | None = None
    extra: dict = field(default_factory=dict)


class VerifierError(RuntimeError):
    """The task has no hidden tests the verifier knows how to run."""


def hidden_tests(task: Task) -> dict[str, str]:
    """The task's test files, keyed by path relative to the task directory."""
    return {f.path: f.content for f in task.files if f.role == "test"}


def parse_pytest(output: str) -> tuple[int, int]:
    """(passed, failed or errored) from pytest output (`-rA` lines, else the summary line)."""
    lines = _LINE.findall(output)
    if lines:
        passed = sum(1 for kind, _ in lines if kind == "PASSED")
        return passed, len(lines) - passed
    summaries = _SUMMARY.findall(output)
    if not summaries:
        return 0, 0
    counts = {kind: int(n) for n, kind in _COUNT.findall(summaries[-1])}
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    return counts.get("passed", 0), failed


def image_config(sandbox: DockerSandbox) -> tuple[dict[str, str], str]:
    """The environment and working directory the sandbox's image configures (what the agent cannot change)."""
    config = sandbox.client.api.inspect_image(sandbox.image).get("Config") or {}
    env = dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
    return env, config.get("WorkingDir") or "/"


def clean_env(
    image_env: dict[str, str], extra: dict[str, str] | None = None, image_bytecode: bool = False
) -> str:
    """The `env -i …` prefix the tests run under, from the image's environment (`image_config`); Python's
    bytecode cache is a fresh directory unless `image_bytecode`."""
    env = dict(image_env)
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    env.setdefault("HOME", "/root")
    env.setdefault("LANG", "C.UTF-8")
    env["TERM"] = "xterm-256color"
    if not image_bytecode:
        env["PYTHONPYCACHEPREFIX"] = f"/tmp/rsr-pycache-{uuid.uuid4().hex}"
    env["SETUPTOOLS_USE_DISTUTILS"] = "stdlib"
    env.update(extra or {})
    return "env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))


def _fresh_test_dirs(
    sandbox: DockerSandbox, files: dict[str, str], dirs: tuple[str, ...], plugin: VerdictPlugin
) -> str | None:
    """Remove what is at /tests and /logs/verifier, check with the engine, and unpack the hidden files and the
    verdict plugin (in a directory that must not exist yet) in one archive; returns a problem or None."""
    sandbox.shell(CLEAR, timeout_s=SHELL_SLACK_S)
    fs = sandbox.fs
    for path in ("/tests", "/logs/verifier"):
        if fs.stat(path) is not None:
            return f"{path} could not be removed before the tests"
    logs = fs.stat("/logs")
    if logs is not None and not logs.is_dir:
        return "/logs could not be made a directory before the tests"
    if fs.stat(plugin.directory) is not None:
        return f"{plugin.directory} existed before the tests"
    # One archive: the engine re-executes a helper to unpack each one.
    plugin_dir = plugin.directory.strip("/")
    unpacked = {f"tests/{rel}": content for rel, content in files.items()}
    unpacked |= {f"{plugin_dir}/{rel}": content for rel, content in plugin.files().items()}
    sandbox.put_files(unpacked, "/", dirs=dirs)
    return None


KILL_ALL = "for _ in 1 2 3 4 5; do kill -9 -1 2>/dev/null; done"
"""SIGKILL every process the shell may signal (all but PID 1 and itself), five times over."""


def stop_everything(sandbox: DockerSandbox) -> None:
    """SIGKILL every process of the container but its PID 1 keepalive (`kill -9 -1` spares only PID 1 and
    itself), freeze the container, and confirm through the engine's process list that nothing else is left.
    Raises SandboxFailure when something is.

    The kill is made in several passes: a process that was forking when it was killed leaves a child that one
    pass does not see (seen once: a daemon of the tests, forked again as it died, outlived the verifier). Not
    "until nothing is left": PID 1 starts its `sleep` again each time it is killed."""
    with contextlib.suppress(SandboxFailure):
        sandbox.exec(["bash", "--noprofile", "--norc", "-c", KILL_ALL], timeout_s=SHELL_SLACK_S)
    sandbox.freeze()
    try:
        top = sandbox.client.api.top(sandbox.container_id, ps_args="-o pid,ppid,args")
    except (docker.errors.DockerException, OSError) as exc:
        raise SandboxFailure(f"cannot list the verifier's processes: {exc}") from None
    left = survivors([[str(c) for c in row] for row in top.get("Processes") or []])
    if left:
        raise SandboxFailure(f"{len(left)} process(es) of the tests outlived SIGKILL: {', '.join(left[:5])}")


def survivors(rows: list[list[str]]) -> list[str]:
    """The commands of an engine process list (pid, ppid, args) other than PID 1 (the one whose parent is
    outside the container) and the `sleep 5` its loop waits on (seen as a copy of PID 1 until it execs)."""
    pids = {row[0] for row in rows}
    init = {row[0]: row[2] for row in rows if row[1] not in pids}
    allowed = {"sleep 5", *init.values()}
    return [row[2] for row in rows if row[0] not in init and not (row[1] in init and row[2] in allowed)]


def ending(exit_code: int, elapsed: float, timeout: int) -> tuple[str | None, bool]:
    """(what the verifier's output says about how the tests ended, whether their reward stands)."""
    if exit_code == 124 or (exit_code == 137 and elapsed >= timeout):
        return f"timed out after {timeout} s (ran {elapsed:.0f} s)", False
    if exit_code > 128:
        return f"the tests were killed (signal {exit_code - 128}) after {elapsed:.0f} s", False
    return None, True


def pytest_check(
    sandbox: DockerSandbox, plugin: VerdictPlugin, reward: float | None
) -> tuple[str | None, dict]:
    """(why a reward of 1 contradicts the verifier's pytest record, what the trajectory keeps of the record)."""
    content, problem = sandbox.fs.read_regular(plugin.record, MAX_RECORD_BYTES)
    verdict = parse_record(content, plugin.nonce) if content is not None else None
    if verdict is None:
        # pytest did not run with the plugin (another runner, or it never loaded): the reward stands alone
        return None, {"verifier_pytest": None if problem == "missing" else f"record {problem}"}
    why = verdict.contradiction() if solved(reward) else None
    return why, {"verifier_pytest": verdict.summary()}


def run_verifier(sandbox: DockerSandbox, task: Task, image_bytecode: bool = False) -> VerifierResult:
    """Run the hidden tests in this sandbox: harbor `tests/test.sh` (reward file) or Terminal-Bench 1
    `run-tests.sh` (resolved iff every parsed pytest test passed). A sandbox that fails under the tests gives
    reward 0 with the reason, and so do tests that were killed or timed out. When the tests end every process
    but PID 1 is killed and the container frozen: call this last on a sandbox. `image_bytecode`: the sandbox
    holds no bytecode but the image's (`wrote_bytecode` of its run is false), so the tests' Python may read it."""
    tests = hidden_tests(task)
    timeout = max(1, int(task.verifier_timeout_sec or DEFAULT_VERIFIER_TIMEOUT_S))
    if "tests/test.sh" not in tests and "run-tests.sh" not in tests:
        raise VerifierError(
            f"task {task.task_id} has no tests/test.sh or run-tests.sh among its hidden files"
        )
    harbor = "tests/test.sh" in tests
    plugin = new_plugin()
    try:
        image_env, _ = image_config(sandbox)
        if harbor:
            files = {p.removeprefix("tests/"): c for p, c in tests.items()}
            problem = _fresh_test_dirs(sandbox, files, ("/logs/verifier", "/logs/agent"), plugin)
            script, env = "/tests/test.sh", clean_env(image_env, plugin.env(image_env), image_bytecode)
        else:
            files = {p.removeprefix("tests/") if p.startswith("tests/") else p: c for p, c in tests.items()}
            problem = _fresh_test_dirs(sandbox, files, (), plugin)
            script, env = (
                "/tests/run-tests.sh",
                clean_env(image_env, {"TEST_DIR": "/tests", **plugin.env(image_env)}, image_bytecode),
            )
        if problem is not None:
            return VerifierResult(0.0, f"[verifier] {problem}: reward 0", False)
        start = time.monotonic()
        res = sandbox.shell(
            f"{env} timeout -k 5 {timeout} bash --noprofile --norc {script}",
            timeout_s=timeout + SHELL_SLACK_S,
        )
        elapsed = time.monotonic() - start
        stop_everything(sandbox)  # whatever the tests started dies here, before the reward is read
        how, stands = ending(res.exit_code, elapsed, timeout)
        output = res.output + (f"\n[verifier] {how}" if how else "")
        if harbor:
            reward, note = read_reward(sandbox.fs)
            if note:
                output += f"\n[verifier] {note}"
        else:
            passed, failed = parse_pytest(res.output)
            reward = 1.0 if passed > 0 and failed == 0 else 0.0
        if not stands and reward:
            output += f"\n[verifier] the reward ({reward:g}) of tests that did not end on their own: reward 0"
            reward = 0.0
        why, extra = pytest_check(sandbox, plugin, reward)
        if why is not None:
            output += f"\n[verifier] inconsistent: the reward is 1 but {why}: reward 0"
            extra["verifier_inconsistent"] = why
            reward = 0.0
    except SandboxFailure as exc:
        return VerifierResult(0.0, f"[verifier] the tests could not run to the end: {exc}: reward 0", False)
    return VerifierResult(reward, output, solved(reward), why, extra)
