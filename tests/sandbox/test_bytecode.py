"""The tests' Python and the bytecode of a run: a run that wrote none has its tests read the image's (no module
compiled again); one that wrote any gets a fresh cache, so bytecode planted beside a source is never read."""

from __future__ import annotations

import pytest

from rsr_core.models import Task, TaskFile
from rsr_core.sandbox.docker_sandbox import DockerSandbox
from rsr_core.sandbox.verification import verify_run

pytestmark = pytest.mark.docker
BASE = "rsr-base:bookworm"
# The tests pass when /app/mod.py says VALUE = 1, and print the bytecode cache they run with.
TEST_SH = (
    'echo "cache:${PYTHONPYCACHEPREFIX:-image}"\n'
    "cd /app && python3 -c 'import mod, sys; sys.exit(mod.VALUE != 1)' && echo 1 > /logs/verifier/reward.txt"
    " || echo 0 > /logs/verifier/reward.txt\n"
)
TASK = Task(
    task_id="bytecode",
    files=[TaskFile(role="test", path="tests/test.sh", content=TEST_SH)],
    verifier_timeout_sec=30,
)
# Bytecode of `VALUE = 1` planted where Python caches mod.py's, its header naming the mtime and size of the
# source left beside it (`VALUE = 0`, the same length), so that a Python reading the cache would take it.
PLANT = (
    "mkdir -p /app && printf 'VALUE = 0\\n' > /app/mod.py && printf 'VALUE = 1\\n' > /tmp/fake.py && "
    'touch -r /app/mod.py /tmp/fake.py && python3 -c "import importlib.util, py_compile; '
    "py_compile.compile('/tmp/fake.py', cfile=importlib.util.cache_from_source('/app/mod.py'))\" && "
    "rm /tmp/fake.py && cd /app && python3 -c 'import mod; assert mod.VALUE == 1'"
)


def _cache(output: str | None) -> str:
    return next(line for line in (output or "").splitlines() if line.startswith("cache:"))


def test_a_run_that_wrote_no_bytecode_is_tested_with_the_images(docker_engine):
    with DockerSandbox(docker_engine, BASE) as sb:
        assert sb.exec("mkdir -p /app && printf 'VALUE = 1\\n' > /app/mod.py").exit_code == 0
        v = verify_run(sb, TASK)
    assert _cache(v.output) == "cache:image"
    assert v.passed and not v.tampered


def test_bytecode_planted_beside_its_source_is_not_read_by_the_tests(docker_engine):
    with DockerSandbox(docker_engine, BASE) as sb:
        planted = sb.exec(PLANT)
        assert planted.exit_code == 0, planted.output  # the agent's own Python takes the planted bytecode
        v = verify_run(sb, TASK)
    assert _cache(v.output).startswith("cache:/tmp/rsr-pycache-")
    assert v.reward == 0.0 and not v.passed
