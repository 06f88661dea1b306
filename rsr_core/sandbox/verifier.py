"""The hidden-test verifier: tests are copied in only after the agent has finished."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from rsr_core.models import Task
from rsr_core.sandbox.docker_sandbox import DockerSandbox

DEFAULT_VERIFIER_TIMEOUT_S = 600.0
_SUMMARY = re.compile(r"=+ (.*?) in [\d.]+s", re.M)
_COUNT = re.compile(r"(\d+) (passed|failed|error|errors|xfailed|xpassed|skipped)")
_LINE = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)", re.M)


@dataclass(frozen=True)
class VerifierResult:
    """Reward in [0, 1] and what the tests printed."""

    reward: float
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


_TXT, _JSON = "__rsr_reward_txt__", "__rsr_reward_json__"


def _reward_of(txt: str, json_text: str) -> float | None:
    """The reward from reward.txt, else reward.json (a number or {"reward": number})."""
    if txt.strip():
        try:
            return float(txt.strip())
        except ValueError:
            return None
    if json_text.strip():
        try:
            obj = json.loads(json_text)
        except ValueError:
            return None
        if isinstance(obj, int | float):
            return float(obj)
        if isinstance(obj, dict) and isinstance(obj.get("reward"), int | float):
            return float(obj["reward"])
    return None


def run_verifier(sandbox: DockerSandbox, task: Task) -> VerifierResult:
    """Copy the hidden tests in and run them: harbor `tests/test.sh` (reward file) or Terminal-Bench 1
    `run-tests.sh` (resolved iff every parsed pytest test passed)."""
    tests = hidden_tests(task)
    timeout = task.verifier_timeout_sec or DEFAULT_VERIFIER_TIMEOUT_S
    if "tests/test.sh" in tests:
        sandbox.put_files(
            {p.removeprefix("tests/"): c for p, c in tests.items()},
            "/tests",
            dirs=("/logs/verifier", "/logs/agent"),
        )
        # One exec: the tests, then the reward files (no second round trip to read them).
        res = sandbox.shell(
            f"timeout -k 5 {max(1, int(timeout))} bash /tests/test.sh; code=$?; echo; echo {_TXT}; "
            f"cat /logs/verifier/reward.txt 2>/dev/null; echo; echo {_JSON}; cat /logs/verifier/reward.json "
            "2>/dev/null; exit $code"
        )
        output, _, rest = res.output.rpartition(f"\n{_TXT}\n")
        txt, _, json_text = rest.partition(f"\n{_JSON}\n")
        reward = _reward_of(txt, json_text)
        if reward is None:
            output += "\n[verifier] test.sh wrote no /logs/verifier/reward.txt or reward.json: reward 0"
            reward = 0.0
        if res.timed_out:
            output += f"\n[verifier] timed out after {timeout:g} s"
        return VerifierResult(reward, output, reward >= 1.0)
    if "run-tests.sh" in tests:
        files = {p.removeprefix("tests/") if p.startswith("tests/") else p: c for p, c in tests.items()}
        sandbox.put_files(files, "/tests")
        res = sandbox.shell(f"TEST_DIR=/tests timeout -k 5 {max(1, int(timeout))} bash /tests/run-tests.sh")
        passed, failed = parse_pytest(res.output)
        ok = passed > 0 and failed == 0
        return VerifierResult(1.0 if ok else 0.0, res.output, ok)
    raise VerifierError(f"task {task.task_id} has no tests/test.sh or run-tests.sh among its hidden files")


def run_solution(sandbox: DockerSandbox, task: Task) -> str:
    """Apply the reference solution (harbor `solution/solve.sh`, Terminal-Bench 1 `solution.sh`); returns its output.

    Used to check a task (the solution must pass, the untouched environment must fail); agents never see it.
    """
    files = {f.path: f.content for f in task.files if f.role == "solution"}
    script = (
        "solution/solve.sh"
        if "solution/solve.sh" in files
        else "solution.sh"
        if "solution.sh" in files
        else None
    )
    if script is None:
        raise VerifierError(f"task {task.task_id} has no solution/solve.sh or solution.sh")
    sandbox.put_files(files, "/solution-rsr")
    res = sandbox.exec(f"bash /solution-rsr/{script}", timeout_s=task.agent_timeout_sec or 600)
    sandbox.exec(["rm", "-rf", "/solution-rsr"])
    return res.output
