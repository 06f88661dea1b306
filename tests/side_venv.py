"""Side virtualenvs for the tools whose own code checks our formats (harbor, Terminal-Bench), which need a
newer Python than ours. Built once under the cache directory (`RSR_CACHE_DIR`, default `~/.cache/rsr`) from
pyenv's Python of the right minor version, with the versions pinned in a constraints file beside the tests.

A missing venv is created; when it cannot be installed the tests fail (never skip), saying whether PyPI could be
reached. `make test` builds them all before the suite starts (`python -m tests.side_venv`), as it builds the
sandbox's base image.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rsr_core.settings import Settings

INSTALL_TIMEOUT_S = 1500
TESTS = Path(__file__).parent
SIDE_VENVS: dict[str, tuple[str, Path, list[str]]] = {
    "harbor": ("3.12", TESTS / "formats" / "harbor-constraints.txt", ["harbor"]),
    "harbor-traces": ("3.12", TESTS / "formats" / "harbor-traces-constraints.txt", ["harbor[huggingface]"]),
    "trainer": (
        "3.12",
        TESTS / "export" / "trainer-constraints.txt",
        ["datasets", "transformers", "tokenizers", "jinja2"],
    ),
}
"""Each side venv: its Python's minor version, the constraints file beside its tests, what it installs."""
QUIET_ENV = {"HARBOR_TELEMETRY": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
"""Environment the side tools run with: harbor sends telemetry unless told not to."""


def find_python(minor: str) -> Path | None:
    """An interpreter of Python `minor` (e.g. "3.12") that runs: pyenv's installed versions first, then
    PATH (where pyenv's shim of a version not selected would fail)."""
    roots = [Path.home() / ".pyenv"]
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            roots.insert(0, Path(done.stdout.strip()))
    candidates = [
        p for root in roots for p in sorted((root / "versions").glob(f"{minor}.*/bin/python"))[::-1]
    ]
    on_path = shutil.which(f"python{minor}")
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        probe = subprocess.run([str(candidate), "-c", "import sys, venv"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return None


def pypi_reachable(timeout: float = 10.0) -> bool:
    """Does PyPI answer at all (said in the failure when a side venv cannot be installed)?"""
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=timeout) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


def side_venv(name: str, minor: str, constraints: Path, requirements: list[str]) -> Path:
    """The python of side venv `name` with `requirements` installed under `constraints`; built when missing
    or when the constraints changed. Concurrent test processes wait for one another."""
    cache = Settings.from_env().cache_dir
    venv = cache / f"{name}-venv"
    stamp = venv / ".rsr-installed"
    wanted = hashlib.sha256(constraints.read_bytes() + "\n".join(requirements).encode()).hexdigest()
    python = venv / "bin" / "python"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{name}-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and stamp.read_text() == wanted and python.exists():
            return python
        base = find_python(minor)
        if base is None:
            pytest.fail(f"no Python {minor} found (on PATH or in pyenv) to build the {name} side venv")
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([str(base), "-m", "venv", str(venv)], check=True, capture_output=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-c", str(constraints), *requirements],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            env={**_base_env(), **QUIET_ENV},
            check=False,
        )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout)[-2000:]
            shutil.rmtree(venv, ignore_errors=True)
            why = " (PyPI cannot be reached from here)" if not pypi_reachable() else ""
            pytest.fail(f"installing {' '.join(requirements)} into the {name} side venv failed{why}:\n{tail}")
        stamp.write_text(wanted)
    return python


def named_venv(name: str) -> Path:
    """The python of one of `SIDE_VENVS`, built when missing."""
    minor, constraints, requirements = SIDE_VENVS[name]
    return side_venv(name, minor, constraints, requirements)


def _base_env() -> dict[str, str]:
    """The environment a child process inherits (PATH, proxies, pip's own configuration)."""
    return dict(os.environ)


def run_side(python: Path, args: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run a script with a side venv's python (telemetry off); fails the test on a non-zero exit."""
    done = subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**_base_env(), **QUIET_ENV},
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(args[:2])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def main() -> int:
    """Build every side venv that is missing or out of date, side by side (the installs mostly wait on the
    network and the disk)."""
    with ThreadPoolExecutor(len(SIDE_VENVS)) as pool:
        futures = {name: pool.submit(named_venv, name) for name in SIDE_VENVS}
    failed = 0
    for name, future in futures.items():
        try:
            print(f"side venv {name}: {future.result()}")
        except pytest.fail.Exception as exc:
            print(f"side venv {name}: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
