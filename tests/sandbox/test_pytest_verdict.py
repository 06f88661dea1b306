"""The reward is read with nothing of the tests alive, and the verifier's own pytest plugin gives a second verdict.

The task's tests import the agent's /app/solution.py (the work area, not the verifier's ground) and want
`answer() == 42`. Each hostile solution answers 41 and tries to get reward 1 anyway from inside the tests:
none may end with reward 1.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.sandbox.pytest_verdict import parse_record
from rsr_core.sandbox.verification import verify_run
from rsr_core.sandbox.verifier import ending, run_verifier, survivors

TASKS = Path(__file__).parent / "data" / "tasks"
TEST_SH = (
    "#!/bin/bash\n"
    "cd /tests && pytest /tests/test_solution.py -rA && echo 1 > /logs/verifier/reward.txt "
    "|| echo 0 > /logs/verifier/reward.txt\n"
)
TEST_SOLUTION = (
    "import sys\n"
    "sys.path.insert(0, '/app')\n"
    "import solution\n\n\n"
    "def test_answer():\n"
    "    assert solution.answer() == 42\n"
)
WRONG = "def answer():\n    return 41\n"
HONEST = "def answer():\n    return 42\n"
# A daemon, detached from the tests, that rewrites the reward to 1 a second after test.sh wrote 0.
DAEMON = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        for _ in range(300):\n"
    "            time.sleep(0.1)\n"
    "            try:\n"
    "                if open('/logs/verifier/reward.txt').read().strip() == '0':\n"
    "                    time.sleep(1)\n"
    "                    open('/logs/verifier/reward.txt', 'w').write('1')\n"
    "                    break\n"
    "            except OSError:\n"
    "                pass\n"
    "    os._exit(0)\n" + WRONG
)
HOSTILE = {
    "os._exit(0) while pytest imports the solution": "import os\nos._exit(0)\n",
    "an atexit handler that exits 0": "import atexit, os\natexit.register(lambda: os._exit(0))\n" + WRONG,
    "pytest's reports patched to passed": (
        "from _pytest.reports import TestReport\n"
        "_made = TestReport.from_item_and_call.__func__\n\n\n"
        "def _passed(cls, item, call):\n"
        "    report = _made(cls, item, call)\n"
        "    report.outcome, report.longrepr = 'passed', None\n"
        "    return report\n\n\n"
        "TestReport.from_item_and_call = classmethod(_passed)\n" + WRONG
    ),
    "an atexit handler that writes reward 1": (
        "import atexit\natexit.register(lambda: open('/logs/verifier/reward.txt', 'w').write('1'))\n" + WRONG
    ),
}


@pytest.fixture(scope="module")
def imports_solution(tmp_path_factory):
    """guarded-answer's image, with tests that import the agent's /app/solution.py."""
    root = tmp_path_factory.mktemp("tasks") / "imports-solution"
    shutil.copytree(TASKS / "guarded-answer", root, ignore=shutil.ignore_patterns("tests"))
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(TEST_SH)
    (root / "tests" / "test_solution.py").write_text(TEST_SOLUTION)
    return read_harbor_task(root)


def _verify(sandboxes, task, solution: str):
    with sandboxes.open(task) as sb:
        sb.put_files({"solution.py": solution}, "/app")
        return verify_run(sb, task)


@pytest.mark.docker
def test_an_honest_solution_is_solved_with_the_plugins_record(sandboxes, imports_solution):
    v = _verify(sandboxes, imports_solution, HONEST)
    assert v.reward == 1.0 and v.passed and v.inconsistent is None, v.output
    assert v.extra()["verifier_pytest"] == {"sessions": 1, "finished": 1, "tests_run": 1, "tests_failed": 0}


@pytest.mark.docker
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_forgery_from_inside_the_tests_is_never_solved(sandboxes, imports_solution, case):
    v = _verify(sandboxes, imports_solution, HOSTILE[case])
    assert v.reward == 0.0 and not v.passed, v.output
    assert not v.tampered  # nothing of the verifier's ground changed: the second verdict alone catches it


@pytest.mark.docker
@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("os._exit(0) while pytest imports the solution", "1 of 1 pytest session(s) did not end normally"),
        ("an atexit handler that exits 0", "pytest ended with exit status 1"),
        (
            "pytest's reports patched to passed",
            "pytest recorded 1 failed test(s): test_solution.py::test_answer",
        ),
    ],
)
def test_a_reward_of_1_the_record_contradicts_is_inconsistent(sandboxes, imports_solution, case, why):
    v = _verify(sandboxes, imports_solution, HOSTILE[case])
    assert v.inconsistent == why and v.extra()["verifier_inconsistent"] == why
    assert f"[verifier] inconsistent: the reward is 1 but {why}: reward 0" in (v.output or "")


@pytest.mark.docker
def test_a_daemon_the_tests_started_is_killed_before_the_reward_is_read(sandboxes, imports_solution):
    with sandboxes.open(imports_solution) as sb:
        sb.put_files({"solution.py": DAEMON}, "/app")
        verifier = sb.snapshot()
        try:
            result = run_verifier(verifier, imports_solution)
            top = verifier.client.api.top(verifier.container_id, ps_args="-o pid,ppid,args")
        finally:
            verifier.remove()
    assert result.reward == 0.0, result.output
    assert survivors([[str(c) for c in row] for row in top["Processes"]]) == []


@pytest.mark.docker
def test_a_test_sh_killed_after_a_reward_was_written_scores_0(sandboxes, imports_solution):
    killer = (
        "import os, signal\n"
        "open('/logs/verifier/reward.txt', 'w').write('1')\n"
        "os.kill(os.getppid(), signal.SIGKILL)\n"  # pytest's parent: test.sh
        "os._exit(0)\n"
    )
    v = _verify(sandboxes, imports_solution, killer)
    assert v.reward == 0.0 and not v.passed, v.output
    assert "[verifier] the tests were killed (signal 9) after " in (v.output or "")
    assert "timed out" not in (v.output or "")


def test_how_the_tests_ended_is_said_with_the_real_seconds():
    assert ending(0, 3.2, 60) == (None, True)
    assert ending(1, 3.2, 60) == (None, True)
    assert ending(124, 60.4, 60) == ("timed out after 60 s (ran 60 s)", False)
    assert ending(137, 65.0, 60) == ("timed out after 60 s (ran 65 s)", False)
    assert ending(137, 11.0, 60) == ("the tests were killed (signal 9) after 11 s", False)
    assert ending(143, 2.0, 60) == ("the tests were killed (signal 15) after 2 s", False)


def test_the_record_needs_this_runs_nonce():
    line = b'{"nonce": "other", "event": "start", "pid": 7}\n{"nonce": "other", "event": "finish", "pid": 7, "exitstatus": 0}\n'
    assert parse_record(line, "mine") is None
    good = line.replace(b"other", b"mine")
    verdict = parse_record(good, "mine")
    assert verdict is not None and verdict.contradiction() == "pytest ran no test"


def test_engine_process_list_leaves_only_the_keepalive():
    init = "sh -c trap '' HUP"
    rows = [["100", "90", init], ["101", "100", "sleep 5"], ["102", "100", init]]
    assert survivors(rows) == []
    assert survivors([*rows, ["103", "100", "python3 daemon.py"]]) == ["python3 daemon.py"]


@pytest.mark.docker
def test_an_inconsistent_run_is_stored_unsolved_and_shown_with_its_reason(
    scripted, sandboxes, imports_solution, tmp_path
):
    import base64
    import subprocess
    import sys

    from rsr_core.store import Store
    from tests.sandbox.test_hostile_agents import _run

    code = base64.b64encode(HOSTILE["an atexit handler that exits 0"].encode()).decode()
    r = _run(scripted, sandboxes, imports_solution, f"echo {code} | base64 -d > /app/solution.py\n")
    why = "pytest ended with exit status 1"
    assert r.reward == 0.0 and r.trajectory.extra["verifier_inconsistent"] == why, (
        r.trajectory.verifier_output
    )
    db = tmp_path / "x.duckdb"
    store = Store(db)
    store.write_trajectories([r.trajectory])
    store.close()
    shown = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "show", r.trajectory.trajectory_id, "--db", str(db)],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr
    assert f"VERIFIER INCONSISTENT: the tests wrote reward 1 but {why}; scored 0" in shown.stdout


def test_the_funnel_counts_rewrites_whose_reward_the_record_contradicted(tmp_path):
    import json
    import subprocess
    import sys

    from rsr_core.models import Step, Trajectory
    from rsr_core.store import Store

    def rewrite(tid: str, extra: dict) -> Trajectory:
        return Trajectory(trajectory_id=tid, task_id="t", kind="rewrite", harness="terminus-2",
                          content_hash=tid, reward=0.0, source_trajectory_id="s", runbook_id="rb",
                          extra=extra, steps=[Step(index=1, source="user", message="Task.")])  # fmt: skip

    db = tmp_path / "x.duckdb"
    store = Store(db)
    store.write_trajectories(
        [
            rewrite("a", {"verifier_inconsistent": "pytest ran no test"}),
            rewrite("b", {"verifier_pytest": None}),
        ]
    )
    store.close()
    done = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", "stats", "funnel", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    funnel = json.loads(done.stdout)
    assert funnel["executions"] == 2 and funnel["verifier_inconsistent"] == 1 and funnel["verified"] == 0
