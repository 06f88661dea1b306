"""The hidden-test verifier: tests are copied in only after the agent has finished, into a place made anew.

`run_verifier` runs the tests in the sandbox it is given; harnesses give it a fresh container started from a
commit of the agent's (see verification.py), so no agent process exists there. Before the tests, `/tests`
and `/logs/verifier` are removed (and `/logs` when it is not a plain directory) and the engine confirms they
are gone, then the hidden files are unpacked by the engine. The tests run with a clean environment: `env -i`
with the image's own environment (its PATH included; the agent cannot change a container's configuration),
`bash --noprofile --norc` (no BASH_ENV, profile or rc file), a fresh PYTHONPYCACHEPREFIX (no bytecode the
agent left is read) and SETUPTOOLS_USE_DISTUTILS=stdlib (setuptools' .pth hook imports nothing). When they
end the container is frozen, so nothing they started can write the reward afterwards, and the reward files
are read through the engine (reward.py).
"""

from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass

from rsr_core.errors import SandboxFailure
from rsr_core.models import Task
from rsr_core.sandbox.docker_sandbox import DockerSandbox
from rsr_core.sandbox.reward import read_reward

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
    """Reward in [0, 1] (None: the tests named no reward) and what the tests printed."""

    reward: float | None
    output: str
    passed: bool


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


def clean_env(sandbox: DockerSandbox, extra: dict[str, str] | None = None) -> str:
    """The `env -i …` prefix the tests run under."""
    env, _ = image_config(sandbox)
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    env.setdefault("HOME", "/root")
    env.setdefault("LANG", "C.UTF-8")
    env["TERM"] = "xterm-256color"
    env["PYTHONPYCACHEPREFIX"] = f"/tmp/rsr-pycache-{uuid.uuid4().hex}"
    env["SETUPTOOLS_USE_DISTUTILS"] = "stdlib"
    env.update(extra or {})
    return "env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))


def _fresh_test_dirs(sandbox: DockerSandbox, files: dict[str, str], dirs: tuple[str, ...]) -> str | None:
    """Remove what is at /tests and /logs/verifier, check with the engine, unpack the hidden files; returns a
    problem or None."""
    sandbox.shell(CLEAR, timeout_s=SHELL_SLACK_S)
    fs = sandbox.fs
    for path in ("/tests", "/logs/verifier"):
        if fs.stat(path) is not None:
            return f"{path} could not be removed before the tests"
    logs = fs.stat("/logs")
    if logs is not None and not logs.is_dir:
        return "/logs could not be made a directory before the tests"
    sandbox.put_files(files, "/tests", dirs=dirs)
    return None


def run_verifier(sandbox: DockerSandbox, task: Task) -> VerifierResult:
    """Run the hidden tests in this sandbox: harbor `tests/test.sh` (reward file) or Terminal-Bench 1
    `run-tests.sh` (resolved iff every parsed pytest test passed). A sandbox that fails under the tests gives
    reward 0 with the reason."""
    tests = hidden_tests(task)
    timeout = max(1, int(task.verifier_timeout_sec or DEFAULT_VERIFIER_TIMEOUT_S))
    if "tests/test.sh" not in tests and "run-tests.sh" not in tests:
        raise VerifierError(
            f"task {task.task_id} has no tests/test.sh or run-tests.sh among its hidden files"
        )
    harbor = "tests/test.sh" in tests
    try:
        if harbor:
            files = {p.removeprefix("tests/"): c for p, c in tests.items()}
            problem = _fresh_test_dirs(sandbox, files, ("/logs/verifier", "/logs/agent"))
            script, env = "/tests/test.sh", clean_env(sandbox)
        else:
            files = {p.removeprefix("tests/") if p.startswith("tests/") else p: c for p, c in tests.items()}
            problem = _fresh_test_dirs(sandbox, files, ())
            script, env = "/tests/run-tests.sh", clean_env(sandbox, {"TEST_DIR": "/tests"})
        if problem is not None:
            return VerifierResult(0.0, f"[verifier] {problem}: reward 0", False)
        res = sandbox.shell(
            f"{env} timeout -k 5 {timeout} bash --noprofile --norc {script}",
            timeout_s=timeout + SHELL_SLACK_S,
        )
        sandbox.freeze()  # whatever the tests started stops here, before the reward is read
        output = res.output + (f"\n[verifier] timed out after {timeout} s" if res.timed_out else "")
        if harbor:
            reward, note = read_reward(sandbox.fs)
            if note:
                output += f"\n[verifier] {note}"
            return VerifierResult(reward, output, reward is not None and reward >= 1.0)
    except SandboxFailure as exc:
        return VerifierResult(0.0, f"[verifier] the tests could not run to the end: {exc}: reward 0", False)
    passed, failed = parse_pytest(res.output)
    ok = passed > 0 and failed == 0
    return VerifierResult(1.0 if ok else 0.0, output, ok)
