"""The package as researchers get it: the wheel's contents; the wheel installed (not editable) into a fresh venv
and used from a directory outside the checkout (`rsr --help`, `rsr demo build`, every page, `rsr app` serving);
what `rsr --help` imports; the declared bounds against the lock.

The wheel tests (marked `package`) run on the interpreter running pytest, in a fresh venv pinned by
constraints.txt, or by the file in RSR_PACKAGE_CONSTRAINTS (scripts/test_pythons.sh passes the versions each
other Python was tested with)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from rsr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
LOCK = ROOT / "constraints.txt"
CONSTRAINTS = Path(os.environ.get("RSR_PACKAGE_CONSTRAINTS") or LOCK).resolve()
# Where a database is made by `make app`, the default settings or a careless command: the build must leave them.
PLANTED_DATABASES = (
    "data/rsr.duckdb",
    "data/rsr.duckdb.wal",
    "data/demo/tasks/stray.duckdb",
    "data/demo_pipeline/stray.duckdb.wal",
)
HEAVY_MODULES = (
    "streamlit",
    "plotly",
    "altair",
    "pandas",
    "docker",
    "duckdb",
    "pyarrow",
    "openai",
    "pydantic",
)
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
DECLARED = [Requirement(r) for r in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"]]


def _run(cmd: list[str | Path], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600):
    """Run a command; fail with its output when it fails."""
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    )
    return proc


def _user_env(home: Path) -> dict[str, str]:
    """A researcher's shell: no project settings, no venv or path tricks, a home of its own."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RSR_", "STREAMLIT_")) and k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
    }
    env["HOME"] = str(home)
    return env


def _source_files(*under: str) -> list[str]:
    """The checkout's files, tracked or not, less what git ignores (local state, caches, outputs, databases)."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "--", *under],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [p for p in out.splitlines() if (ROOT / p).is_file()]


def _in_wheel(path: str) -> str:
    return "rsr_core/demo_data/" + path.removeprefix("data/") if path.startswith("data/") else path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`pip wheel --no-deps` of a copy of the checkout's sources (no stale build/ or egg-info, no interference
    with builds in the checkout), with databases planted where they get made."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    for path in _source_files():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, src / path)
    for path in PLANTED_DATABASES:
        (src / path).write_bytes(b"a database, not a release artefact")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-cache-dir",
            str(src),
            "-w",
            str(work / "dist"),
        ],
        cwd=work,
    )
    (built,) = (work / "dist").glob("rsr_studio-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv of this interpreter with the wheel installed from its file, pinned by the constraints."""
    from uv import find_uv_bin

    venv = tmp_path_factory.mktemp("installed") / "venv"
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    uv = find_uv_bin()
    _run([uv, "venv", "-q", "--python", sys.executable, venv], cwd=venv.parent, env=env)
    _run(
        [uv, "pip", "install", "-q", "--python", venv / "bin" / "python", "-c", CONSTRAINTS, wheel],
        cwd=venv.parent,
        env=env,
    )
    return venv


@pytest.fixture
def outside(tmp_path) -> Path:
    """A working directory outside the checkout, with a home of its own."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    assert not tmp_path.resolve().is_relative_to(ROOT)
    return tmp_path


@pytest.mark.package
def test_the_wheel_holds_the_package_the_studio_and_the_demo_and_no_database(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_in_wheel(p) for p in _source_files("rsr_core", "data") if _in_wheel(p) not in names)
    assert not missing, (
        f"files of the package missing from the wheel (pyproject.toml: a new subpackage goes in "
        f"[tool.setuptools] packages, a new kind of data file in package-data): {missing}"
    )
    pages = {n for n in names if re.fullmatch(r"rsr_core/ui/screens/\w+\.py", n)}
    assert len(pages) >= 7 and "rsr_core/ui/app.py" in names
    assert {
        f"rsr_core/demo_data/demo/tasks/{t.name}/task.toml" for t in (DATA / "demo" / "tasks").iterdir()
    } <= names
    assert any(
        n.startswith("rsr_core/demo_data/demo/jobs/") and n.endswith("/trajectory.json") for n in names
    )
    assert any(n.startswith("rsr_core/demo_data/demo_pipeline/") and n.endswith(".jsonl") for n in names)
    assert "rsr_core/demo_data/scripted/demo_model.json" in names
    assert {"rsr_core/prompts/planner_v1.md", "rsr_core/prompts/critic_v1.md", "rsr_core/py.typed"} <= names
    assert not [n for n in names if ".duckdb" in n], "a database file is in the wheel"
    dist, version = wheel.name.split("-")[:2]
    assert {n.split("/")[0] for n in names} == {"rsr_core", f"{dist}-{version}.dist-info"}
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "rsr = rsr_core.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.package
def test_the_wheel_carries_the_c_build_of_the_rows_and_the_installed_package_uses_it(
    wheel, installed, outside
):
    """Built where a C compiler is (make test installs one): an ingest from the wheel builds its rows in C."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: the wheel is built without the C module, and its rows in Python")
    built = [n for n in zipfile.ZipFile(wheel).namelist() if re.fullmatch(r"rsr_core/store/_rows\..*\.so", n)]
    assert len(built) == 1, built
    probe = "from rsr_core.store.arrow_rows import native_rows; print(native_rows().__file__)"
    env = _user_env(outside / "home")
    where = _run([installed / "bin" / "python", "-c", probe], cwd=outside / "work", env=env).stdout.strip()
    assert Path(where).resolve().is_relative_to(installed.resolve()), where


@pytest.mark.package
def test_the_installed_studio_works_from_outside_the_checkout(installed, outside):
    env = _user_env(outside / "home")
    cwd = outside / "work"
    rsr, python = installed / "bin" / "rsr", installed / "bin" / "python"

    where = _run([python, "-c", "import rsr_core; print(rsr_core.__file__)"], cwd=cwd, env=env).stdout.strip()
    assert Path(where).resolve().is_relative_to(installed.resolve()), f"rsr_core imported from {where}"
    assert "demo" in _run([rsr, "--help"], cwd=cwd, env=env).stdout

    out = json.loads(_run([rsr, "demo", "build", "--db", "demo.duckdb", "--json"], cwd=cwd, env=env).stdout)
    tasks = [t for t in (DATA / "demo" / "tasks").iterdir() if t.is_dir()]
    runs = list((DATA / "demo" / "jobs").rglob("trajectory.json"))
    assert out["built"] and out["report"]["errors"] == []
    assert out["summary"]["tasks"] == len(tasks) > 0
    assert out["report"]["trajectories_added"] == len(runs) == sum(out["summary"]["trajectories"].values())
    assert out["summary"]["trajectories"]["discovery"] > 0 and out["summary"]["trajectories"]["rewrite"] > 0
    runbooks = json.loads(
        _run([rsr, "runbooks", "list", "--db", "demo.duckdb", "--json"], cwd=cwd, env=env).stdout
    )
    assert runbooks, "the demo pipeline's runbooks were not loaded"

    # Every page of the installed app runs on the demo database (Streamlit's own test runner, no server).
    _run([python, "-c", PAGES_RUN], cwd=cwd, env={**env, "RSR_DB": str(cwd / "demo.duckdb")})


PAGES_RUN = """
import threading, time
from pathlib import Path
import rsr_core.ui
from streamlit.testing.v1 import AppTest
pages = sorted((Path(rsr_core.ui.__file__).parent / "screens").glob("*.py"))
assert pages
for page in pages:
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert not at.exception, (page.name, [e.message for e in at.exception])
# A server outlives the work its pages start in the background; this process must let it finish too.
deadline = time.monotonic() + 120
for thread in threading.enumerate():
    if thread is not threading.main_thread():
        thread.join(max(0, deadline - time.monotonic()))
left = [t.name for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()]
assert not left, f"background work of the pages still running after 120 s: {left}"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode("utf-8", "replace")


def _session_members(sid: int) -> list[str]:
    """Processes still in the session `sid` (the app was started as its leader)."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            left.append(stat.parent.name)
    return left


@pytest.mark.package
def test_rsr_app_serves_the_installed_studio_and_stops_cleanly(installed, outside):
    env = _user_env(outside / "home")
    cwd = outside / "work"
    _run([installed / "bin" / "rsr", "demo", "build", "--db", "demo.duckdb"], cwd=cwd, env=env)
    port = _free_port()
    log = (outside / "app.log").open("w")
    app = subprocess.Popen(
        [
            str(installed / "bin" / "rsr"),
            "app",
            "--db",
            "demo.duckdb",
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
        ],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, health = time.monotonic() + 90, None
        while time.monotonic() < deadline and app.poll() is None:
            try:
                health = _get(f"{base}/_stcore/health")
                break
            except OSError:
                time.sleep(0.25)
        assert health is not None, f"no health answer; app log:\n{(outside / 'app.log').read_text()}"
        assert health[0] == 200 and health[2].strip() == "ok"
        status, kind, html = _get(f"{base}/")
        assert status == 200 and kind.startswith("text/html") and '<div id="root">' in html
        script = re.search(r'src="\.?/?(static/js/[^"]+\.js)"', html)
        assert script, "the main page names no script"
        assert _get(f"{base}/{script.group(1)}")[0] == 200
    finally:
        app.send_signal(signal.SIGTERM)
        try:
            app.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(app.pid, signal.SIGKILL)
            app.wait()
            pytest.fail("rsr app did not stop on SIGTERM within 30 s")
        finally:
            log.close()
    time.sleep(0.5)
    assert _session_members(app.pid) == [], "processes of rsr app are left"
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=5):
        pass  # nobody listens on the port any more


@pytest.mark.parametrize("args", [["--help"], ["ingest", "--help"]])
def test_help_imports_no_heavy_module(args, tmp_path):
    """`rsr --help` builds the parser only: the engines are imported by the commands that use them."""
    rsr = Path(sys.executable).parent / "rsr"
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run(
        [str(rsr), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "usage: rsr" in proc.stdout
    imported = _imported(proc)
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY_MODULES)
    assert heavy == [], f"rsr {' '.join(args)} imports {heavy}"


def _imported(proc: subprocess.CompletedProcess) -> set[str]:
    """The modules a process run with PYTHONPROFILEIMPORTTIME imported."""
    imported = {
        line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    }
    assert len(imported) > 20, "no import log: PYTHONPROFILEIMPORTTIME had no effect"
    return imported


@pytest.mark.parametrize(
    "args", [["list"], ["show", "nothing-by-this-id"], ["stats", "summary"], ["jobs", "list"]]
)
def test_reading_commands_import_no_arrow(args, tmp_path):
    """A command that only reads the store never loads Arrow (nor numpy behind it): it is most of a short
    command's start, and only writes and exports need it."""
    db = tmp_path / "rsr.duckdb"
    Store(db).close()
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "rsr_core.cli", *args, "--db", str(db)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    imported = _imported(proc)
    assert "duckdb" in imported  # the command did read the store
    arrow = sorted(m for m in imported if m.split(".")[0] in ("pyarrow", "numpy", "pandas"))
    assert arrow == [], f"rsr {' '.join(args)} imports {arrow[:5]}"


def test_a_re_ingest_that_finds_nothing_new_loads_neither_pandas_nor_the_analysis(tmp_path):
    """Known files are skipped by their signatures, and the refreshes at the end ask first whether anything is
    due: a re-ingest of an unchanged corpus reads no file and loads neither pandas nor the analysis."""
    db = tmp_path / "rsr.duckdb"
    jobs = ROOT / "tests" / "data" / "harbor_job"
    command = [sys.executable, "-m", "rsr_core.cli", "ingest", str(jobs), "--db", str(db), "--json"]
    first = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0 and json.loads(first.stdout)["trajectories_added"] > 0, first.stderr[-2000:]
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and json.loads(again.stdout)["trajectories_added"] == 0, again.stderr[-2000:]
    loaded = sorted(
        m for m in _imported(again) if m.split(".")[0] == "pandas" or m.startswith("rsr_core.analysis")
    )
    assert loaded == [], f"a re-ingest of nothing new loads {loaded[:5]}"


def test_every_subpackage_is_listed_for_the_wheel():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "rsr_core").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    missing = sorted(found - listed)
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml, or they do not ship"


def test_every_dependency_has_a_lower_bound_and_no_cap():
    for req in DECLARED:
        ops = {s.operator for s in req.specifier}
        assert ops == {">="}, f"{req}: declare exactly a lower bound (>=), no cap"


def test_the_lock_pins_every_declared_dependency_within_its_bounds():
    pins = {}
    for line in LOCK.read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = Version(version.split(";")[0].strip())
    assert re.search(r"^# exclude-newer: \S+", LOCK.read_text(), re.M), "the lock has no date line: make lock"
    for req in DECLARED:
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{req.name} is not in {LOCK.name}: run make lock"
        assert pins[name] in req.specifier, (
            f"{LOCK.name} pins {req.name}=={pins[name]}, outside {req}: make lock"
        )
