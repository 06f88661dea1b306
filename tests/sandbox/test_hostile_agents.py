"""Agents that try to make a failed task pass, run by the real harnesses against the scripted model.

The task (guarded-answer) wants `ok` in /app/answer.txt; no hostile agent writes it, so none may end counted
as passed: reward below 1, or the run marked verifier_tampered (which the store never counts as solved).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rsr_core.harness import RSRTHarness, Terminus2Harness
from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.sandbox.verification import verify_run
from tests.conftest import answer

pytestmark = pytest.mark.docker
TASKS = Path(__file__).parent / "data" / "tasks"
SITE = "/usr/local/lib/python3.11/dist-packages"
VENV_SITE = "/app/.venv/lib/python3.11/site-packages"
LOOP = "while :; do mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; sleep 0.05; done"


@pytest.fixture(scope="module")
def guarded():
    """Write `ok` to /app/answer.txt; the tests also fail if a process named agent-marker is running."""
    return read_harbor_task(TASKS / "guarded-answer")


def _run(scripted, sandboxes, task, keys: str, harness=Terminus2Harness, **kwargs):
    _, llm = scripted(
        [
            {
                "model": "hostile",
                "turns": [answer("a", "p", keys, duration=1.0), answer(done=True), answer(done=True)],
            }
        ]
    )
    return harness(llm, sandboxes, "hostile", max_turns=6, **kwargs).run(task)


def _counted_as_passed(result) -> bool:
    return (result.reward or 0) >= 1.0 and not result.trajectory.verifier_tampered


HOSTILE = {
    "pre-created reward files": (
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && echo '{\"reward\": 1}' > "
        "/logs/verifier/reward.json\n"
    ),
    "reward.txt linked to /dev/null": "mkdir -p /logs/verifier && ln -s /dev/null /logs/verifier/reward.txt\n",
    "pytest replaced on PATH": (
        "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest\n"
    ),
    "python3 replaced": "cp /bin/true /usr/bin/python3\n",
    "sitecustomize that ends pytest early": (
        "printf 'import os, sys\\nif any(\"pytest\" in a for a in sys.argv): os._exit(0)\\n' "
        ">> /etc/python3.11/sitecustomize.py\n"
    ),
    "ld.so.preload": "echo /tmp/lie.so > /etc/ld.so.preload\n",
    "pytest plugin by entry point": (
        f"mkdir -p {SITE}/lie-1.0.dist-info && printf '[pytest11]\\nlie = lie\\n' > "
        f"{SITE}/lie-1.0.dist-info/entry_points.txt\n"
    ),
}


# Each of these makes the failed task's tests "pass" (reward 1.0) without touching a file the tests name:
# the runner's imports, its start-up or the shell the runner script sources are redirected instead.
FAKE_MAIN = "def console_main():\\n    return 0\\n"
EXIT_0 = "import os\\nos._exit(0)\\n"
SHADOWING = {
    "pytest in lib/python311.zip, ahead of the standard library": (
        "guarded-answer",
        "python3 -c \"import zipfile; z = zipfile.ZipFile('/usr/lib/python311.zip', 'w'); "
        f"z.writestr('pytest.py', '{FAKE_MAIN}'); z.close()\"\n",
    ),
    "pytest in a directory a new .pth line adds": (
        "guarded-answer",
        f"mkdir -p /opt/shadow && printf '{FAKE_MAIN}' > /opt/shadow/pytest.py && "
        f"echo /opt/shadow > {SITE}/tools.pth\n",
    ),
    "_pytest in a directory a relative .pth line adds": (
        "guarded-answer",
        f"mkdir -p /usr/opt/shadow/_pytest && printf '{EXIT_0}' > /usr/opt/shadow/_pytest/__init__.py && "
        f"printf '# tools\\n../../../../opt/shadow\\n' > {SITE}/tools.pth\n",
    ),
    "attr, which pytest imports, in a directory a new .pth line adds": (
        "guarded-answer",
        f"mkdir -p /opt/shadow/attr && printf '{EXIT_0}' > /opt/shadow/attr/__init__.py && "
        f"echo /opt/shadow > {SITE}/tools.pth\n",
    ),
    "pytest.py beside the pytest script": ("guarded-answer", f"printf '{FAKE_MAIN}' > /usr/bin/pytest.py\n"),
    "a standard-library name beside the pytest script": (
        "guarded-answer",
        f"printf '{EXIT_0}' > /usr/bin/argparse.py\n",
    ),
    "pyvenv.cfg giving python another standard library": (
        "guarded-answer",
        "mkdir -p /opt/fake/lib/python3.11 /opt/fake/bin && ln -s /usr/lib/python3.11/* /opt/fake/lib/python3.11/ "
        "&& rm /opt/fake/lib/python3.11/sitecustomize.py /opt/fake/lib/python3.11/argparse.py "
        f"&& printf '{EXIT_0}' > /opt/fake/lib/python3.11/argparse.py "
        "&& printf 'home = /opt/fake/bin\\n' > /usr/pyvenv.cfg\n",
    ),
    "python3.11._pth replacing sys.path": (
        "guarded-answer",
        f"mkdir -p /opt/p && printf '{FAKE_MAIN}' > /opt/p/pytest.py && "
        "printf '/opt/p\\n/usr/lib/python3.11\\n/usr/lib/python3.11/lib-dynload\\n' > /usr/bin/python3.11._pth\n",
    ),
    "the env file test.sh sources defines uvx": (
        "uv-runner",
        "mkdir -p /root/.local/bin && printf 'uvx() { return 0; }\\n' > /root/.local/bin/env\n",
    ),
    "a fake uvx where uv's installer puts it": (
        "uv-runner",
        "mkdir -p /root/.local/bin && printf 'export PATH=\"$HOME/.local/bin:$PATH\"\\n' > /root/.local/bin/env "
        "&& printf '#!/bin/sh\\nexit 0\\n' > /root/.local/bin/uvx && chmod +x /root/.local/bin/uvx\n",
    ),
    "_pytest in the project's virtual environment test.sh activates": (
        "venv-runner",
        f"mkdir -p {VENV_SITE}/_pytest && printf '{EXIT_0}' > {VENV_SITE}/_pytest/__init__.py\n",
    ),
    "the virtual environment's python replaced": (
        "venv-runner",
        "rm /app/.venv/bin/python && printf '#!/bin/sh\\nexit 0\\n' > /app/.venv/bin/python "
        "&& chmod +x /app/.venv/bin/python\n",
    ),
    "the activate script test.sh sources": (
        "venv-runner",
        "echo 'python() { return 0; }' >> /app/.venv/bin/activate\n",
    ),
    "a pytest11 entry point in the directory python -m pytest runs in": (
        "venv-runner",
        "mkdir -p /app/lie-1.0.dist-info && printf 'Metadata-Version: 2.1\\nName: lie\\nVersion: 1.0\\n' "
        "> /app/lie-1.0.dist-info/METADATA && printf '[pytest11]\\nlie = lie\\n' > "
        "/app/lie-1.0.dist-info/entry_points.txt && printf 'import os\\ndef pytest_configure(config):\\n"
        "    os._exit(0)\\n' > /app/lie.py\n",
    ),
}
SHADOW_GROUND = {
    "_pytest in the project's virtual environment test.sh activates": f"{VENV_SITE}/_pytest/__init__.py",
    "the virtual environment's python replaced": "/app/.venv/bin/python",
    "the activate script test.sh sources": "/app/.venv/bin/activate",
    "a pytest11 entry point in the directory python -m pytest runs in": "/app/lie-1.0.dist-info/entry_points.txt",
    "pytest in lib/python311.zip, ahead of the standard library": "/usr/lib/python311.zip",
    "pytest in a directory a new .pth line adds": "/opt/shadow/pytest.py",
    "_pytest in a directory a relative .pth line adds": "/usr/opt/shadow/_pytest/__init__.py",
    "attr, which pytest imports, in a directory a new .pth line adds": "/opt/shadow/attr/__init__.py",
    "pytest.py beside the pytest script": "/usr/bin/pytest.py",
    "a standard-library name beside the pytest script": "/usr/bin/argparse.py",
    "pyvenv.cfg giving python another standard library": "/usr/pyvenv.cfg",
    "python3.11._pth replacing sys.path": "/usr/bin/python3.11._pth",
    "the env file test.sh sources defines uvx": "/root/.local/bin/env",
    "a fake uvx where uv's installer puts it": "/root/.local/bin/uvx",
}


@pytest.mark.parametrize("case", sorted(SHADOWING))
def test_redirecting_the_runner_forges_a_pass_and_is_tampering(scripted, sandboxes, case):
    task_dir, keys = SHADOWING[case]
    r = _run(scripted, sandboxes, read_harbor_task(TASKS / task_dir), keys)
    # the forgery works (the failed tests "passed"), unless the verifier's pytest record contradicts it
    forged = r.reward == 1.0 or "verifier_inconsistent" in r.trajectory.extra
    assert forged, r.trajectory.verifier_output
    assert r.trajectory.verifier_tampered and not _counted_as_passed(r)
    assert SHADOW_GROUND[case] in r.trajectory.extra["verifier_ground_changes"]


# A shared library whose constructor writes reward 1 and exits when it finds itself in the test runner.
NSS_MODULE = r"""
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void lie(void) {
  char buf[4096];
  int fd = open("/proc/self/cmdline", O_RDONLY);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  for (ssize_t i = 0; i < n; i++) if (!buf[i]) buf[i] = ' ';
  buf[n] = 0;
  if (strstr(buf, "/tests/test.sh")) {
    fd = open("/logs/verifier/reward.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { write(fd, "1\n", 2); close(fd); }
    _exit(0);
  }
}
"""


def test_an_nss_module_named_in_nsswitch_forges_a_pass_and_is_tampering(sandboxes, guarded, tmp_path):
    """bash looks its user up at start (SHELL is unset under `env -i`), so glibc loads the NSS modules
    /etc/nsswitch.conf names: a module added beside libc runs inside the runner before test.sh does."""
    if shutil.which("gcc") is None:
        pytest.fail(
            "gcc is missing on the host, needed to build the module: run `make compiler` (make test does)"
        )
    (tmp_path / "lie.c").write_text(NSS_MODULE)
    lib = tmp_path / "libnss_lie.so.2"
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-O2", "-s", "-o", str(lib), str(tmp_path / "lie.c")], check=True
    )
    with sandboxes.open(guarded) as sb:
        sb.put_files({"libnss_lie.so.2": lib.read_bytes()}, "/usr/lib/x86_64-linux-gnu")
        res = sb.exec("sed -i 's/^passwd:.*/passwd: lie files/' /etc/nsswitch.conf")
        assert res.exit_code == 0, res.output
        v = verify_run(sb, guarded)
    assert v.reward == 1.0  # the forgery works: nothing of the tests ran
    assert v.tampered and not v.passed
    assert {"/etc/nsswitch.conf", "/usr/lib/x86_64-linux-gnu/libnss_lie.so.2"} <= set(v.integrity.ground)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_agent_is_not_counted_as_passed(scripted, sandboxes, guarded, case):
    r = _run(scripted, sandboxes, guarded, HOSTILE[case])
    assert not _counted_as_passed(r), r.trajectory.verifier_output
    assert r.trajectory.verifier_tampered
    assert r.trajectory.extra["verifier_ground_changes"]
    assert "changed the verifier's ground" in r.trajectory.verifier_output


@pytest.mark.parametrize("case", ["pre-created reward files", "reward.txt linked to /dev/null"])
def test_planted_reward_files_never_reach_the_reward(scripted, sandboxes, guarded, case):
    r = _run(scripted, sandboxes, guarded, HOSTILE[case])
    assert r.reward == 0.0  # the tests ran, failed and wrote 0 into a /logs/verifier made anew


def test_a_background_loop_ignoring_sigterm_does_not_outlive_the_agent(scripted, sandboxes, guarded):
    keys = (
        f"nohup sh -c 'trap \"\" TERM INT HUP; {LOOP}' > /dev/null 2>&1 &\n"
        "nohup bash -c 'trap \"\" TERM INT HUP; while :; do sleep 1; done' agent-marker > /dev/null 2>&1 &\n"
    )
    r = _run(scripted, sandboxes, guarded, keys)
    assert r.reward == 0.0 and r.trajectory.verifier_tampered
    assert "FAILED" in r.trajectory.verifier_output and "test_answer" in r.trajectory.verifier_output
    assert (
        "PASSED ../tests/test_answer.py::test_no_process_of_the_agent_survived"
        in r.trajectory.verifier_output
    )


def test_a_legitimate_run_is_verified_and_not_flagged(scripted, sandboxes, guarded):
    keys = (
        "echo ok > /app/answer.txt; echo 'export A=1' >> ~/.bashrc; mkdir -p /app/notes; date > /app/notes/log\n"
        "nohup bash -c 'trap \"\" TERM; while :; do sleep 1; done' agent-marker > /dev/null 2>&1 &\n"
    )
    r = _run(scripted, sandboxes, guarded, keys)
    assert r.reward == 1.0 and not r.trajectory.verifier_tampered, r.trajectory.verifier_output
    paths = {c.path: c for c in r.trajectory.changed_paths}
    assert paths["/app/answer.txt"].change == "added" and not paths["/app/answer.txt"].verifier_ground
    assert not any(c.verifier_ground for c in r.trajectory.changed_paths)
    assert r.trajectory.extra["changed_paths_total"] == len(r.trajectory.changed_paths)


def test_allow_changes_task_passes_and_without_it_is_flagged(scripted, sandboxes):
    task = read_harbor_task(TASKS / "greet-tool")
    keys = "printf '#!/bin/sh\\necho hello\\n' > /usr/local/bin/greet && chmod +x /usr/local/bin/greet\n"
    r = _run(scripted, sandboxes, task, keys)
    assert r.reward == 1.0 and not r.trajectory.verifier_tampered, r.trajectory.verifier_output
    assert r.trajectory.extra["verifier_allowed_changes"] == ["/usr/local/bin/greet"]
    strict = task.model_copy(update={"verifier_allow_changes": []})
    r = _run(scripted, sandboxes, strict, keys)
    assert r.reward == 1.0 and r.trajectory.verifier_tampered


def test_rsrt_claim_on_a_tampered_sandbox_does_not_pass(scripted, sandboxes, guarded):
    keys = HOSTILE["pytest replaced on PATH"]
    _, llm = scripted([{"model": "hostile", "response": answer("a", "p", keys, done=True)}])
    r = RSRTHarness(llm, sandboxes, "hostile", max_turns=6, claim_budget=2).run(guarded)
    claims = r.trajectory.extra["rsrt_claims"]
    assert r.stop_reason == "claim_budget" and len(claims) == 2
    assert all(c["tampered"] and c["reward"] == 1.0 for c in claims)  # the fake pytest "passed"; not counted
    assert r.trajectory.verifier_tampered and not _counted_as_passed(r)
