"""The verifier in a real container: test directories made anew, a clean environment, reward files read
defensively (whatever wrote them: a hostile test.sh stands in for agent code the tests run)."""

from __future__ import annotations

import time

import pytest

from rsr_core.models import Task, TaskFile
from rsr_core.sandbox.docker_sandbox import DockerSandbox
from rsr_core.sandbox.verifier import run_verifier

pytestmark = pytest.mark.docker
BASE = "rsr-base:bookworm"


def _task(test_sh: str, **files: str) -> Task:
    tests = [TaskFile(role="test", path="tests/test.sh", content=test_sh)]
    tests += [TaskFile(role="test", path=f"tests/{name}", content=text) for name, text in files.items()]
    return Task(task_id="verifier-check", files=tests, verifier_timeout_sec=30)


def _verify(engine, task: Task, planted: str = "true"):
    with DockerSandbox(engine, BASE) as sb:
        assert sb.exec(planted).exit_code == 0
        return run_verifier(sb, task)


def test_a_planted_reward_is_gone_before_the_tests_run(docker_engine):
    failing = _task(
        "pytest -q /tests/test_x.py && echo 1 > /logs/verifier/reward.txt\n",  # writes nothing on failure
        **{"test_x.py": "def test_x():\n    assert False\n"},
    )
    planted = "mkdir -p /logs/verifier /tests && echo '{\"reward\": 1}' > /logs/verifier/reward.json && touch /tests/x"
    result = _verify(docker_engine, failing, planted)
    assert result.reward == 0.0 and "wrote no /logs/verifier/reward.txt" in result.output


def test_logs_planted_as_a_link_is_replaced_by_a_directory(docker_engine):
    task = _task("test -L /logs && echo link || echo dir; echo 1 > /logs/verifier/reward.txt\n")
    result = _verify(docker_engine, task, "mkdir -p /tmp/fake/verifier && ln -s /tmp/fake /logs")
    assert "dir" in result.output.split() and result.reward == 1.0


def test_tests_run_in_a_clean_environment(docker_engine):
    task = _task(
        'echo "env:$BASH_ENV:$PYTHONSTARTUP:$EVIL:$PYTHONPYCACHEPREFIX"; echo 1 > /logs/verifier/reward.txt\n'
    )
    planted = "echo 'echo SOURCED' > /root/.bashrc && cp /root/.bashrc /etc/bash.bashrc"
    with DockerSandbox(docker_engine, BASE) as sb:
        sb.exec(planted)
        sb.shell("true")  # the channel shell is up; its environment is the container's, not the tests'
        result = run_verifier(sb, task)
    assert "SOURCED" not in result.output
    line = next(x for x in result.output.splitlines() if x.startswith("env:"))
    assert line.startswith("env::::/tmp/rsr-pycache-")


@pytest.mark.parametrize(
    "writer, reward, reason",
    [
        ("mkfifo /logs/verifier/reward.txt", 0.0, "not a regular file"),
        ("ln -s /dev/zero /logs/verifier/reward.txt", 0.0, "not a regular file"),
        (
            "head -c 10000000 /dev/zero | tr '\\0' 1 > /logs/verifier/reward.txt",
            0.0,
            "larger than 65536 bytes",
        ),
        ("echo nan > /logs/verifier/reward.txt", 0.0, "not a finite number"),
        ("echo 7 > /logs/verifier/reward.txt", 0.0, "outside [0, 1]"),
        ("echo '{\"reward\": Infinity}' > /logs/verifier/reward.json", 0.0, "not a finite number"),
        ('echo \'{"accuracy": 1.0, "f1": 0.5}\' > /logs/verifier/reward.json', None, "no 'reward' key"),
        ('echo \'{"accuracy": 1.0, "notes": "x"}\' > /logs/verifier/reward.json', 1.0, None),
        (": > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/reward.json", 1.0, None),
    ],
)
def test_hostile_or_odd_reward_files(docker_engine, writer, reward, reason):
    result = _verify(docker_engine, _task(writer + "\n"))
    assert result.reward == reward, result.output
    assert result.passed == (reward == 1.0)
    if reason:
        assert reason in result.output


def test_what_the_tests_leave_running_is_frozen_before_the_reward_is_read(docker_engine):
    task = _task(
        "echo 0 > /logs/verifier/reward.txt\n"
        "nohup sh -c 'sleep 1; echo 1 > /logs/verifier/reward.txt' > /dev/null 2>&1 &\n"
    )
    with DockerSandbox(docker_engine, BASE) as sb:
        result = run_verifier(sb, task)
        assert sb.frozen
        time.sleep(2)  # long enough for the leftover writer, were it not frozen
        assert sb.fs.read_regular("/logs/verifier/reward.txt", 100) == (b"0\n", None)
    assert result.reward == 0.0
