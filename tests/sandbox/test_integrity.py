"""The verifier's ground, decided on the engine's diff of a real container after agent-like changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsr_core.ingest.tasks import read_harbor_task
from rsr_core.sandbox.integrity import KINDS, MAX_STORED_PATHS
from rsr_core.sandbox.verification import verify_run

pytestmark = pytest.mark.docker
TASKS = Path(__file__).parent / "data" / "tasks"
SITE = "/usr/local/lib/python3.11/dist-packages"


@pytest.fixture(scope="module")
def guarded():
    """The guarded-answer task (image FROM rsr-base:bookworm, WORKDIR /app; test.sh runs pytest)."""
    return read_harbor_task(TASKS / "guarded-answer")


def _report(sandboxes, task, script: str):
    with sandboxes.open(task) as sb:
        res = sb.exec(script)
        assert res.exit_code == 0, res.output
        return verify_run(sb, task, run_tests=False).integrity


TAMPERING = {
    "reward file": (
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt",
        "/logs/verifier/reward.txt",
    ),
    "tests as a link": ("ln -s /app /tests", "/tests"),
    "logs as a link": ("ln -s /tmp /logs", "/logs"),
    "pytest shadowed on PATH": (
        "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest",
        "/usr/local/bin/pytest",
    ),
    "python3's target replaced": ("cp /bin/true /usr/bin/python3", "/usr/bin/python3.11"),
    "sh's target replaced": ("rm /usr/bin/dash && cp /bin/true /usr/bin/dash", "/usr/bin/dash"),
    "a command test.sh calls": ("cp /bin/true /usr/bin/echo", "/usr/bin/echo"),
    "ld.so.preload": ("echo /tmp/lie.so > /etc/ld.so.preload", "/etc/ld.so.preload"),
    "libm": ("touch /usr/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"),
    "a library python loads, re-linked": (
        "ln -sfn /opt/lie.so /usr/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
    ),
    "a library bash loads, replaced": (
        "cp /usr/lib/x86_64-linux-gnu/libtinfo.so.6.4 /tmp/t && cp /tmp/t /usr/lib/x86_64-linux-gnu/libtinfo.so.6.4",
        "/usr/lib/x86_64-linux-gnu/libtinfo.so.6.4",
    ),
    "sitecustomize": (
        "echo 'import os' >> /etc/python3.11/sitecustomize.py",
        "/etc/python3.11/sitecustomize.py",
    ),
    "usercustomize in the user site": (
        "mkdir -p /root/.local/lib/python3.11/site-packages && "
        "echo 'import os' > /root/.local/lib/python3.11/site-packages/usercustomize.py",
        "/root/.local/lib/python3.11/site-packages/usercustomize.py",
    ),
    ".pth that runs code": (f"echo 'import os; os.getpid()' > {SITE}/lie.pth", f"{SITE}/lie.pth"),
    "pytest plugin by entry point": (
        f"mkdir -p {SITE}/lie-1.0.dist-info && printf '[pytest11]\\nlie = lie\\n' > {SITE}/lie-1.0.dist-info/entry_points.txt",
        f"{SITE}/lie-1.0.dist-info/entry_points.txt",
    ),
    "pytest's own package": (
        "touch /usr/lib/python3/dist-packages/_pytest/main.py",
        "/usr/lib/python3/dist-packages/_pytest/main.py",
    ),
    "the standard library": (
        "echo '#' >> /usr/lib/python3.11/json/__init__.py",
        "/usr/lib/python3.11/json/__init__.py",
    ),
    "conftest above /tests": ("echo 'x = 1' > /conftest.py", "/conftest.py"),
    "pytest shadowed in the working directory": (
        "mkdir -p /app/_pytest && touch /app/_pytest/__init__.py",
        "/app/_pytest",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_changes_to_the_ground_are_tampering(sandboxes, guarded, case):
    script, path = TAMPERING[case]
    report = _report(sandboxes, guarded, script)
    assert report.tampered and path in report.ground, report.ground
    stored = {c.path: c for c in report.changed_paths}
    assert stored[path].verifier_ground


def test_ordinary_work_is_not_tampering(sandboxes, guarded):
    setuptools_line = (
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; "
        "enabled and __import__('_distutils_hack').add_shim(); "
    )
    nspkg_line = (
        "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join(sys._getframe(1).f_locals"
        "['sitedir'], *('zope',));importlib = has_mfs and __import__('importlib.util');has_mfs and "
        "__import__('importlib.machinery');m = has_mfs and sys.modules.setdefault('zope', importlib.util."
        "module_from_spec(importlib.machinery.PathFinder.find_spec('zope', [os.path.dirname(p)])));m = m or "
        "sys.modules.setdefault('zope', types.ModuleType('zope'));mp = (m or []) and m.__dict__.setdefault("
        "'__path__',[]);(p not in mp) and mp.append(p)"
    )
    script = "\n".join(
        [
            "set -e",
            "echo ok > /app/answer.txt && mkdir -p /app/src && echo 'print(1)' > /app/src/main.py",
            "echo 'export A=1' >> ~/.bashrc",
            "printf '#!/bin/sh\\necho hi\\n' > /usr/local/bin/mytool && chmod +x /usr/local/bin/mytool",
            f"mkdir -p {SITE}/mypkg {SITE}/mypkg-1.0.dist-info && touch {SITE}/mypkg/__init__.py",
            f"printf '[console_scripts]\\nmytool = mypkg:main\\n' > {SITE}/mypkg-1.0.dist-info/entry_points.txt",
            f"echo /app/src > {SITE}/mypaths.pth",
            f'echo "{setuptools_line}" > {SITE}/distutils-precedence.pth',
            f'echo "{nspkg_line}" > {SITE}/zope.interface-5.0-nspkg.pth',
            "python3 -c 'import json, email, mypkg'",
            "mkdir -p /app/venv/lib/python3.11/site-packages/pytest",
            "touch /app/venv/lib/python3.11/site-packages/pytest/__init__.py /app/conftest.py",
            "touch /etc/ld.so.cache /var/lib/dpkg/status",  # what a package install does
        ]
    )
    report = _report(sandboxes, guarded, script)
    assert not report.tampered, report.ground
    paths = {c.path for c in report.changed_paths}
    assert {"/app/answer.txt", "/usr/local/bin/mytool", f"{SITE}/mypaths.pth", "/root/.bashrc"} <= paths


def test_allow_changes_lets_a_task_change_its_ground(sandboxes, guarded):
    allowed = guarded.model_copy(update={"verifier_allow_changes": ["/usr/local/bin"]})
    script = "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest"
    report = _report(sandboxes, allowed, script)
    assert not report.tampered and report.allowed == ["/usr/local/bin/pytest"]
    assert report.extra()["verifier_allowed_changes"] == ["/usr/local/bin/pytest"]


def test_stored_paths_are_capped_but_ground_entries_kept(sandboxes, guarded):
    script = (
        "mkdir -p /app/many && cd /app/many && seq 3000 | xargs touch && "
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.json"
    )
    report = _report(sandboxes, guarded, script)
    assert report.total > 3000 and len(report.changed_paths) == MAX_STORED_PATHS
    assert report.extra()["changed_paths_total"] == report.total
    assert "/logs/verifier/reward.json" in {c.path for c in report.changed_paths if c.verifier_ground}
    assert report.tampered


def test_ordinary_python_and_uv_work_is_not_tampering(sandboxes):
    """Beside the rules for sys.path, uv and libraries: an editable install's .pth, tools of one's own on PATH
    and in ~/.local/bin, a module of one's own and a tool named like a standard module beside the pytest
    script, a uv task's own project files, a new library."""
    task = read_harbor_task(TASKS / "uv-runner")
    script = "\n".join(
        [
            "set -e",
            "mkdir -p /app/src/mypkg && touch /app/src/mypkg/__init__.py",
            f"echo /app/src > {SITE}/__editable__.mypkg-1.0.pth",
            "printf '#!/bin/sh\\necho hi\\n' > /usr/local/bin/mytool && chmod +x /usr/local/bin/mytool",
            "printf 'print(1)\\n' > /usr/local/bin/helper.py",
            "mkdir -p /root/.local/bin && printf '#!/bin/sh\\necho fmt\\n' > /root/.local/bin/black",
            "chmod +x /root/.local/bin/black && mkdir -p /app/.venv/bin && touch /app/pyproject.toml",
            "python3 -c 'import sys; sys.path.insert(0, \"/app/src\"); import mypkg'",
            "touch /usr/lib/x86_64-linux-gnu/libnew.so.1",  # a library a package install adds
            "printf 'print(1)\\n' > /usr/bin/helper_tool.py && cp /usr/bin/true /usr/bin/time",
        ]
    )
    report = _report(sandboxes, task, script)
    assert not report.tampered, report.ground
    paths = {c.path for c in report.changed_paths}
    assert {
        f"{SITE}/__editable__.mypkg-1.0.pth",
        "/root/.local/bin/black",
        "/usr/local/bin/helper.py",
        "/usr/bin/helper_tool.py",
    } <= paths


def test_ordinary_work_in_the_project_environment_the_tests_activate_is_not_tampering(sandboxes):
    """The venv-runner task's test.sh activates /app/.venv and runs `python -m pytest` in /app: packages
    installed into that environment and modules of the project are ordinary work."""
    task = read_harbor_task(TASKS / "venv-runner")
    venv_site = "/app/.venv/lib/python3.11/site-packages"
    script = "\n".join(
        [
            "set -e",
            "echo ok > /app/answer.txt && printf 'def solve():\\n    return 1\\n' > /app/solver.py",
            f"mkdir -p {venv_site}/requests {venv_site}/requests-2.0.dist-info",
            f"touch {venv_site}/requests/__init__.py",
            f"printf '[console_scripts]\\nreq = requests:main\\n' > {venv_site}/requests-2.0.dist-info/entry_points.txt",
            "printf '#!/app/.venv/bin/python\\n' > /app/.venv/bin/req && chmod +x /app/.venv/bin/req",
        ]
    )
    report = _report(sandboxes, task, script)
    assert not report.tampered, report.ground
    assert f"{venv_site}/requests/__init__.py" in {c.path for c in report.changed_paths}


def test_reads_of_the_image_are_shared_but_never_for_what_the_run_changed(docker_engine, guarded):
    """A clean run keeps what its lookups read of the image (a PATH directory is a directory); a later run of
    the same image that turns that directory into a link to a fake pytest is still caught, and the lookups
    it shares give what the container itself gives."""
    from rsr_core.sandbox.fs import ContainerFS
    from rsr_core.sandbox.provider import DockerSandboxProvider
    from rsr_core.settings import Settings

    provider = DockerSandboxProvider(docker_engine, Settings.from_env(), budget_s=600)
    assert not _report(provider, guarded, "true").tampered
    image = docker_engine.images.get(provider.image_for(guarded)).id
    kept = provider.image_reads.table(image)
    assert kept[("stat", "/usr/local/bin")].is_dir
    swap = (
        "mv /usr/local/bin /usr/local/bin.old && mkdir -p /opt/lie && ln -s /opt/lie /usr/local/bin && "
        "printf '#!/bin/sh\\nexit 0\\n' > /opt/lie/pytest && chmod +x /opt/lie/pytest"
    )
    report = _report(provider, guarded, swap)
    assert report.tampered and "/opt/lie/pytest" in report.ground, report.ground
    emptied = "rm -rf /usr/local/bin && mkdir /usr/local/bin && ln -s /bin/true /usr/local/bin/python3"
    report = _report(provider, guarded, emptied)
    assert report.tampered and "/usr/local/bin/python3" in report.ground, report.ground
    with provider.open(guarded) as sb:
        sb.exec("ln -sf /bin/true /usr/bin/python3")
        sb.freeze()
        shared, fresh = sb.fs, ContainerFS(docker_engine.api, sb.container_id)
        shared.trust_diff({path: KINDS[kind] for path, kind in sb.diff()})
        for path in ("/usr/bin/python3", "/usr/local/bin/pytest", "/bin/sh"):
            assert shared.chain(path) == fresh.chain(path)
        assert shared.chain("/usr/bin/python3")[-1] == "/usr/bin/true"
