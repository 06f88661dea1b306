"""Did a run change how the verifier's programs load? Decided on the engine's filesystem diff of the agent's
container.

The diff is what the engine reports (`docker diff`), read from outside: nothing the agent runs can hide an
entry from it. The rule is not a list of tricks but of the places that decide what the verifier's programs
load: in those places every change counts (`verifier_tampered`) unless it is one of the few forms named
below that cannot change what the tests' runners load. Everywhere else (the task's work area, /app, /opt,
/tmp, a user's ~/.bashrc, …) nothing counts.

1. The verifier's own places: `/tests`, `/logs/verifier` and everything under them, `/logs` when it is no
   longer a directory.
2. Programs: every candidate on PATH for the verifier's tools (sh, bash, env, timeout, sleep, rm, ldconfig),
   the runners (python, python3, pytest, py.test), every command the test scripts call by name or path and
   the `#!` interpreter of each that is a script, with every symlink hop. PATH is the image's, with what the
   test scripts put first (`PATH=…`; with uv/uvx ~/.local/bin and ~/.cargo/bin, where uv's installer puts
   uv, uvx and the `env` file harbor's test.sh sources; the bin directory of a venv whose `activate` they
   source); every file they source is ground too. Ordinary: a link named as a Python (`python`, `python3`,
   `python3.N`) the run added that ends at an unchanged Python of the image (another name for it).
3. The dynamic loader: /etc/ld.so.preload, ld.so.conf and ld.so.conf.d; the loader, libc, libm, libpthread,
   libdl and librt; every shared library in the library directories changed or deleted; NSS modules and
   /etc/nsswitch.conf. The loader cache is judged by what it resolves: any library name of the image that
   the cache the run left, or a cache rebuilt from the run's filesystem, gives another file is ground
   (loader_check.py, run before the tests). Ordinary: a library under a name of its own, `ldconfig` run.
4. Python's start: a sitecustomize/usercustomize anywhere; in the site directories of the pythons on PATH
   (and /usr, /usr/local, ~/.local): a `.pth` file with an executable line (other than the exact lines
   setuptools writes: distutils-precedence, and the namespace-package line importing exactly importlib.util
   and importlib.machinery), a sourceless top-level `.pyc`, pytest, its plugins (`pytest_*`, `pytest-*`, an
   entry_points.txt registering `pytest11`) and what a passing pytest session imports (pluggy, iniconfig, py,
   attr/attrs, exceptiongroup, tomli), any change to the standard library, `lib/python3XY.zip`,
   `<python>._pth` and `pyvenv.cfg`. In a directory a `.pth` line the run wrote puts on sys.path: pytest and
   what it imports. Ordinary: other packages pip or apt install (one bringing pygments, which pytest imports
   only to show a failure, included) and plain `.pth` path lines.
5. The directories the tests run in (the working directory, those the test scripts `cd` into: first on
   sys.path for `python -m pytest`) and the directory of a Python script on the ground: a module or regular
   package named as pytest, what it imports or a standard-library module a pytest session imports (beside a
   script on the ground: any standard-library name, and any distribution); a `pytest11` entry point; and a
   conftest.py, pytest.ini, .pytest.ini, pyproject.toml, tox.ini or setup.cfg in `/` (above /tests).
   Ordinary: a directory without `__init__` (a namespace portion never shadows a module or regular package),
   other module names (`test.py`, `utils.py`), bytecode in `__pycache__` (`name.tag.pyc`, never read: the
   tests of a run that wrote bytecode run with a fresh PYTHONPYCACHEPREFIX; any other file there is judged
   like the rest).
6. Configuration of the tools the test scripts call: apt and dpkg hooks with apt-get/dpkg, pip and uv
   configuration with pip/uv/uvx, curl and wget configuration files, and settings of git's that run a program
   or include another file (a pager, hooks, fsmonitor, filters, `!` aliases, …); uv's cache and managed pythons
   with uv/uvx. The system shell's startup files (/etc/profile, profile.d, bash.bashrc, /etc/environment)
   only when a test script starts a login or interactive shell (`bash -l`, `su`, `sudo -i`) or reads them:
   the verifier's own shell reads none.

Left to the second verdict (verifier.py, pytest_verdict.py): the agent's own code that the tests import or
run. A task whose goal is to change part of the ground lists it in `[verifier] allow_changes` (exact path or
directory prefix).
"""

from __future__ import annotations

import posixpath
import re
import sys
from dataclasses import dataclass, field

from rsr_core.models import ChangedPath, Task
from rsr_core.sandbox.fs import ENGINE_MOUNTS, ContainerFS, under
from rsr_core.sandbox.script_commands import (
    command_words,
    directories_entered,
    path_additions,
    reads_shell_profiles,
    sourced_files,
)

MAX_STORED_PATHS = 2000
MAX_HOOK_FILE = 64 * 1024
KINDS = {0: "changed", 1: "added", 2: "deleted"}
GROUND_DIRS = ("/tests", "/logs/verifier")
VERIFIER_TOOLS = ("sh", "bash", "env", "timeout", "sleep", "rm", "ldconfig")
TEST_RUNNERS = ("python", "python3", "pytest", "py.test")
SYSTEM_FILES = {
    "/etc/ld.so.preload", "/etc/ld.so.conf",
    "/conftest.py", "/pytest.ini", "/.pytest.ini", "/pyproject.toml", "/tox.ini", "/setup.cfg",
    "/etc/nsswitch.conf",
}  # fmt: skip
SYSTEM_DIRS = ("/etc/ld.so.conf.d",)
PROFILE_FILES = {"/etc/profile", "/etc/bash.bashrc", "/etc/environment"}
PROFILE_DIRS = ("/etc/profile.d",)
# Configuration that makes a tool the tests call run other code (apt and dpkg hooks, a package index or a
# Python for pip and uv, a config file curl or wget read): ground when the test scripts call the tool.
TOOL_CONFIG = {
    ("apt", "apt-get", "aptitude", "dpkg"): ("/etc/apt/apt.conf", "/etc/apt/apt.conf.d", "/etc/dpkg/dpkg.cfg",
                                             "/etc/dpkg/dpkg.cfg.d"),
    ("pip", "pip3", "uv", "uvx"): ("/etc/pip.conf", "/etc/xdg/pip", "~/.pip", "~/.config/pip", "/etc/uv",
                                   "/etc/xdg/uv", "~/.config/uv"),
    ("curl",): ("/etc/curlrc", "~/.curlrc", "~/.config/curlrc"),
    ("wget",): ("/etc/wgetrc", "~/.wgetrc"),
}  # fmt: skip
GIT_CONFIG = ("/etc/gitconfig", "~/.gitconfig", "~/.config/git")
# Git settings that make git run a program or read another file; the rest of a git config (user.name,
# init.defaultBranch, …) is what a git task asks for.
_GIT_RUNS = re.compile(
    r"^\s*(fsmonitor|hookspath|pager|editor|sshcommand|askpass|textconv|helper|command|clean|smudge|process|"
    r"path|program|cmd|gpgsign)\s*=|^\s*\[\s*(include|includeif|filter|credential|gpg|core\s+\"|"
    r"difftool|mergetool)\b|=\s*\"?!",
    re.I | re.M,
)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_LIBC = re.compile(
    r"^/(usr/)?lib(64|32)?/([^/]+/)?(ld-linux[^/]*|ld-[\d.]+\.so|lib(c|m|pthread|dl|rt)(\.so[.\d]*|-[\d.]+\.so))$"
)
_SHARED_LIB = re.compile(
    r"^/(usr/)?(local/)?lib(64|32)?/([a-z0-9_]+-linux-gnu[^/]*/)?(?P<name>[^/]+\.so(\.[\d.]+)*)$"
)
_PYLIB = re.compile(r"/lib/python3[^/]*/")
_PYTEST_TOP = re.compile(
    r"^(pytest|_pytest|pluggy|py|iniconfig)(\.py|-[^/]*\.(dist|egg)-info)?$|^pytest[_-]", re.I
)
_STDLIB_ZIP = re.compile(r"^/lib/python3\d*\.zip$")
_MODULE_FILE = re.compile(r"^[A-Za-z_]\w*(\.[\w-]+)?\.(py|pyc|so)$")
# What a Python runner imports: the standard library, pytest and what pytest imports.
_PYTEST_IMPORTS = {
    "pytest", "_pytest", "pluggy", "py", "iniconfig", "attr", "attrs", "packaging", "exceptiongroup", "tomli",
    "colorama", "pygments", "sitecustomize", "usercustomize",
}  # fmt: skip
_RUNNER_IMPORTS = frozenset(sys.stdlib_module_names) | _PYTEST_IMPORTS
# The standard-library modules a pytest session imports (measured: a one-test session under Debian's Python
# 3.11 with pytest 7.2, and under pytest 8 with xdist, asyncio and hypothesis plugins): what a module of that
# name in the directory the tests run in (first on sys.path for `python -m pytest`) would replace. Other
# standard names there (a `test.py`, a `cmd2/`) are the project's own business.
_SESSION_STDLIB = frozenset(
    """__future__ _abc _ast _asyncio _bisect _blake2 _bz2 _codecs _collections _collections_abc _compression
    _contextvars _csv _datetime _decimal _elementtree _frozen_importlib _frozen_importlib_external _functools
    _hashlib _heapq _imp _io _json _locale _lzma _opcode _operator _posixsubprocess _queue _random _sha512
    _signal _sitebuiltins _socket _sre _ssl _stat _string _struct _thread _typing _uuid _warnings _weakref
    _weakrefset abc argparse array ast asyncio atexit base64 bdb binascii bisect bz2 calendar cmd code codecs
    codeop collections concurrent contextlib contextvars copy copyreg csv dataclasses datetime decimal difflib
    dis email encodings enum errno faulthandler fcntl fnmatch functools gc genericpath gettext glob hashlib
    heapq html importlib inspect io ipaddress itertools json keyword linecache locale logging lzma marshal math
    ntpath numbers opcode operator os pathlib pdb platform posix posixpath pprint pyexpat queue quopri random re
    readline reprlib runpy select selectors shlex shutil signal site socket ssl stat string struct subprocess
    tempfile textwrap threading time token tokenize tomllib traceback types typing unicodedata unittest urllib
    uuid warnings weakref xml zipfile zipimport zlib""".split()  # noqa: SIM905 (a list of some 150 names)
)
_SESSION_IMPORTS = _SESSION_STDLIB | _PYTEST_IMPORTS
# What a passing pytest session imports from a site directory. Not listed: pygments and colorama (imported only
# to show a failure, which the verifier's pytest record reports anyway) and packaging (only for `minversion`):
# a package that brings one along or upgrades it (rich brings pygments, poetry a newer packaging) is ordinary.
_SITE_IMPORTS = _PYTEST_IMPORTS - {"pygments", "colorama", "packaging"}
_TAGGED_PYC = re.compile(r"^[^.]+\.[\w-]+(\.opt-\d+)?\.pyc$")
_PYTHON_ALIAS = re.compile(r"^python(3(\.\d+)?)?$")
_PYTHON_BINARY = re.compile(r"^python3\.\d+$")
_HOOK_NAMES = {"sitecustomize.py", "usercustomize.py", "sitecustomize", "usercustomize"}
_PTH_SETUPTOOLS = "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); "
# setuptools' namespace-package line, with every quoted name replaced by 'N' (names are [\w.]+ only, so no
# code fits in them); a dotted namespace adds the setattr suffix.
_NSPKG = (
    "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join(sys._getframe(1).f_locals['N'], "
    "*('N',));importlib = has_mfs and __import__('N');has_mfs and __import__('N');m = has_mfs and "
    "sys.modules.setdefault('N', importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec('N', "
    "[os.path.dirname(p)])));m = m or sys.modules.setdefault('N', types.ModuleType('N'));mp = (m or []) and "
    "m.__dict__.setdefault('N',[]);(p not in mp) and mp.append(p)"
)
_NSPKG_SUFFIX = ";m and setattr(sys.modules['N'], 'N', m)"


@dataclass
class IntegrityReport:
    """What the run changed and whether any of it is the verifier's ground."""

    changed_paths: list[ChangedPath]
    """Every ground entry and then the rest, up to MAX_STORED_PATHS in all."""
    total: int
    """Entries in the full diff."""
    ground: list[str] = field(default_factory=list)
    """Ground entries the task does not allow: their presence makes the run tampered."""
    allowed: list[str] = field(default_factory=list)
    """Ground entries the task allows (`[verifier] allow_changes`)."""
    changed: dict[str, str] = field(default_factory=dict)
    """Every entry of the diff (path → added, changed or deleted), the engine's own mounts left out."""

    @property
    def tampered(self) -> bool:
        """The run changed the verifier's ground."""
        return bool(self.ground)

    def add_ground(self, paths: list[str], task: Task) -> None:
        """Ground found after the diff was read (a library name taken over, loader_check.py)."""
        allow = _allowances(task)
        stored = {c.path: c for c in self.changed_paths}
        for path in paths:
            if path in stored:
                stored[path].verifier_ground = True
            else:
                self.changed_paths.insert(0, ChangedPath(path=path, change="added", verifier_ground=True))
            target = self.allowed if under(path, allow) else self.ground
            if path not in target:
                target.append(path)

    def extra(self) -> dict:
        """What the trajectory's `extra` keeps about the diff."""
        out: dict = {"changed_paths_total": self.total, "changed_paths_stored": len(self.changed_paths)}
        if self.ground:
            out["verifier_ground_changes"] = self.ground[:100]
        if self.allowed:
            out["verifier_allowed_changes"] = self.allowed[:100]
        return out


@dataclass
class Ground:
    """The ground of one verification: exact paths, directory prefixes, python prefixes, working directory."""

    exact: set[str]
    prefixes: tuple[str, ...]
    python_prefixes: set[str]
    workdir: str
    script_dirs: set[str] = field(default_factory=set)
    """Directories of the Python scripts on the ground: the first entry of their `sys.path`."""
    pth_roots: set[str] = field(default_factory=set)
    """Directories the `.pth` files the run added or changed put on `sys.path`."""
    cwds: set[str] = field(default_factory=set)
    """Directories the tests may run in: the working directory and those the test scripts `cd` into."""
    aliases: set[str] = field(default_factory=set)
    """Links the run added that only name an unchanged Python of the image (`python` → python3.11)."""
    profiles: bool = False
    """The test scripts start a shell that reads the system's startup files."""
    git_config: tuple[str, ...] = ()
    """Git's configuration files, when the test scripts call git."""
    packages: dict[str, bool] = field(default_factory=dict)
    """Directories already found to be, or not to be, regular packages."""


def resolve_ground(
    fs: ContainerFS, task: Task, env: dict[str, str], workdir: str, changed: dict[str, str] | None = None
) -> Ground:
    """Resolve the ground in the container as the run left it (symlinks and PATH as they are now); `changed`
    is the run's diff (path → kind)."""
    changed = changed or {}
    home = env.get("HOME") or "/root"
    names = {*VERIFIER_TOOLS, *TEST_RUNNERS}
    paths: set[str] = set()
    search: list[str] = []
    scripts = [
        f.content
        for f in task.files
        if f.role == "test" and (f.path.endswith(".sh") or f.path.rsplit("/", 1)[-1] == "run-tests.sh")
    ]
    cwds = [workdir.rstrip("/") or "/", *(d for s in scripts for d in directories_entered(s, home))]
    for script in scripts:
        more_names, more_paths = command_words(script)
        sourced = sourced_files(script, home, cwds)
        names |= more_names
        paths |= more_paths | sourced
        search += path_additions(script, home)
        # a virtual environment's activate script puts its bin directory first on PATH
        search += [posixpath.dirname(p) for p in sorted(sourced) if posixpath.basename(p) == "activate"]
    if names & {"uv", "uvx"}:
        search += [f"{home}/.local/bin", f"{home}/.cargo/bin"]  # where uv's installer puts uv, uvx and `env`
    path_dirs = []
    for d in [*search, *(env.get("PATH") or DEFAULT_PATH).split(":")]:
        if d.startswith("/"):
            real = fs.canonical(d.rstrip("/") + "/x").rsplit("/", 1)[0] or "/"
            if real not in path_dirs:
                path_dirs.append(real)
    exact: set[str] = set(SYSTEM_FILES)
    aliases: set[str] = set()
    pythons: set[str] = set()
    script_dirs: set[str] = set()
    todo = [posixpath.join(d, n) for n in sorted(names) for d in path_dirs] + sorted(paths)
    seen: set[str] = set()
    while todo:
        candidate = todo.pop(0)
        if candidate in seen:
            continue
        seen.add(candidate)
        hops = fs.chain(candidate)
        exact.update(hops)
        aliases |= _python_aliases(hops, changed)
        if any(posixpath.basename(h).startswith("python") for h in hops):
            pythons.update(hops)
        interpreters = _interpreters(fs, hops[-1], path_dirs)
        if any(posixpath.basename(i).startswith("python") for i in interpreters):
            script_dirs.add(posixpath.dirname(hops[-1]))  # the script's own directory comes first on sys.path
        todo += [i for i in interpreters if i not in seen]
    for hop in pythons:
        # files that redirect a python's start-up: `<executable>._pth` (replaces sys.path) and pyvenv.cfg
        # beside the executable or one level up (a virtual environment's `home`, its standard library)
        up = posixpath.dirname(hop)
        exact |= {f"{hop}._pth", f"{up}/pyvenv.cfg", f"{posixpath.dirname(up)}/pyvenv.cfg"}
    prefixes = [*GROUND_DIRS, *SYSTEM_DIRS]
    if names & {"uv", "uvx"}:
        prefixes += [f"{home}/.cache/uv", f"{home}/.local/share/uv"]
    for tools, places in TOOL_CONFIG.items():
        if names & set(tools):
            prefixes += [re.sub(r"^~(?=/)", home, p) for p in places]
    git_config = tuple(re.sub(r"^~(?=/)", home, p) for p in GIT_CONFIG) if "git" in names else ()
    profiles = any(reads_shell_profiles(s) for s in scripts)
    python_prefixes = {"/usr", "/usr/local", f"{home}/.local"}
    python_prefixes |= {posixpath.dirname(posixpath.dirname(p)) for p in pythons}
    return Ground(
        exact - aliases,
        tuple(prefixes),
        python_prefixes,
        workdir.rstrip("/") or "/",
        script_dirs,
        cwds=set(cwds),
        aliases=aliases,
        profiles=profiles,
        git_config=git_config,
    )


def _python_aliases(hops: list[str], changed: dict[str, str]) -> set[str]:
    """The added links of a lookup that end at an unchanged Python of the image, each named as a Python
    (`ln -s /usr/bin/python3 /usr/local/bin/python`): another name for the same interpreter."""
    if len(hops) < 2 or not _PYTHON_BINARY.match(posixpath.basename(hops[-1])) or hops[-1] in changed:
        return set()
    out: set[str] = set()
    for hop in hops[:-1]:
        if changed.get(hop) == "added" and _PYTHON_ALIAS.match(posixpath.basename(hop)):
            out.add(hop)
        elif hop in changed:
            return set()  # a hop of the image's was changed: not a mere second name
    return out


def _interpreters(fs: ContainerFS, path: str, path_dirs: list[str]) -> list[str]:
    """The interpreter a small script names on its `#!` line (`env NAME` resolved on PATH)."""
    content, _ = fs.read_resolved(path, 4096)
    if not content or not content.startswith(b"#!"):
        return []
    words = content[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return []
    if posixpath.basename(words[0]) == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return [words[0], *(posixpath.join(d, rest[0]) for d in path_dirs)] if rest else [words[0]]
    return [words[0]]


def is_ground(path: str, kind: str, ground: Ground, fs: ContainerFS, changed: dict[str, str]) -> bool:
    """Whether one diff entry falls on the ground (see the module docstring for the list)."""
    if path in ground.exact or under(path, ground.prefixes):
        return True
    if under(path, ground.git_config):
        return kind != "deleted" and _git_config_runs(fs, path)
    if path in PROFILE_FILES or under(path, PROFILE_DIRS):
        return ground.profiles  # read only by a login or interactive shell, which the verifier does not start
    if path == "/logs":
        st = fs.stat(path)
        return st is not None and not st.is_dir
    if path == "/etc/ld.so.cache":
        return False  # what it resolves is compared with the image's (loader_check.py)
    if _LIBC.match(path):
        return True
    lib = _SHARED_LIB.match(path)
    if lib and (kind != "added" or lib["name"].startswith("libnss_")):
        return True  # a library the runners load replaced (its constructor runs in them), or an NSS module
    parts = path.split("/")
    if len(parts) > 2 and parts[-2] == "__pycache__" and _TAGGED_PYC.match(parts[-1]):
        return False  # bytecode beside its source: never read, its tests run with a fresh PYTHONPYCACHEPREFIX
    if any(p in _HOOK_NAMES or p in ("sitecustomize.pyc", "usercustomize.pyc") for p in parts):
        return True
    for cwd in ground.cwds | {ground.workdir}:
        base = cwd.rstrip("/") + "/"
        if path.startswith(base) and _shadows(path, base, _SESSION_IMPORTS, fs, changed, ground.packages):
            return True  # `python -m pytest` imports from the working directory first
        if path.startswith(base) and _entry_point_file(path[len(base) :]) and _registers_plugin(fs, path):
            return True  # …and reads the distributions there: a `pytest11` entry point is a plugin
    for d in ground.script_dirs:
        base = d.rstrip("/") + "/"
        rest = path[len(base) :] if path.startswith(base) else ""
        if rest.split("/", 1)[0].endswith((".dist-info", ".egg-info")) or (
            rest and _shadows(path, base, _RUNNER_IMPORTS, fs, changed, ground.packages)
        ):
            return True  # a module, package or distribution beside a Python script on the ground shadows its import
    for root in ground.pth_roots:
        rest = path[len(root.rstrip("/")) + 1 :] if path.startswith(root.rstrip("/") + "/") else ""
        top = rest.split("/", 1)[0]
        if rest and (_PYTEST_TOP.match(top) or _module_name(top) in _PYTEST_IMPORTS):
            return True  # pytest and what it imports, in a directory a new `.pth` line puts on sys.path
        if _entry_point_file(rest) and _registers_plugin(fs, path):
            return True
    return _python_ground(path, kind, ground, fs)


def _python_ground(path: str, kind: str, ground: Ground, fs: ContainerFS) -> bool:
    prefix = next(
        (p for p in ground.python_prefixes if path.startswith(p.rstrip("/") + "/lib/python3")), None
    )
    if prefix and _STDLIB_ZIP.match(path[len(prefix.rstrip("/")) :]):
        return True  # lib/python3XY.zip is on sys.path before the standard library
    match = _PYLIB.search(path, len(prefix.rstrip("/"))) if prefix else None
    if match is None:
        return False
    rest = path[match.end() :]
    site, _, inner = rest.partition("/")
    if site not in ("site-packages", "dist-packages"):
        return bool(rest)  # the standard library itself
    top = inner.split("/", 1)[0]
    if _PYTEST_TOP.match(top) or _module_name(top) in _SITE_IMPORTS:
        return True  # pytest, its plugins and what a passing session imports (an upgrade of one counts too)
    if kind == "deleted":
        return False
    if inner == top and top.endswith(".pyc"):
        return True
    if inner == top and top.endswith(".pth"):
        return _pth_runs_code(fs, path)
    if path.endswith(".dist-info/entry_points.txt") or path.endswith(".egg-info/entry_points.txt"):
        return _registers_plugin(fs, path)
    return False


def _git_config_runs(fs: ContainerFS, path: str) -> bool:
    """A git configuration file that makes git run a program or read another file (a directory is not)."""
    st = fs.stat(path)
    if st is None or st.is_dir:
        return False
    content, problem = fs.read_regular(path, MAX_HOOK_FILE)
    return problem is not None or bool(_GIT_RUNS.search((content or b"").decode(errors="replace")))


def _module_name(top: str) -> str:
    """The import name a top-level entry of a sys.path directory provides (`attr`, `attr.py`,
    `attr.cpython-311-x86_64-linux-gnu.so`, `attrs-22.2.0.dist-info` → attr / attrs)."""
    return re.split(r"[.-]", top, maxsplit=1)[0]


def _shadows(
    path: str,
    base: str,
    names: frozenset[str],
    fs: ContainerFS,
    changed: dict[str, str],
    cache: dict[str, bool],
) -> bool:
    """`path` is, or lies in, a module or regular package named in `names` at the top of sys.path directory
    `base`. A directory without `__init__` is a namespace portion, which never shadows a module or a regular
    package found anywhere on sys.path."""
    rest = path[len(base) :]
    top, _, inner = rest.partition("/")
    name = _module_name(top)
    if name not in names:
        return False
    if _MODULE_FILE.match(top) and not inner:
        return True
    if "." in top:
        return False
    return _regular_package(base + top, fs, changed, cache)


def _regular_package(package: str, fs: ContainerFS, changed: dict[str, str], cache: dict[str, bool]) -> bool:
    """Is `package` a directory with an `__init__` (the run's or the image's)? Answered once per directory in
    `cache`: a run that writes many files under one (logs in /app/logging/) asks it for each of them."""
    if package not in cache:
        st = fs.stat(package)
        inits = package + "/__init__."
        cache[package] = (
            st is not None
            and st.is_dir  # an extensionless file is no module
            and (
                any(p.startswith(inits) and kind != "deleted" for p, kind in changed.items())
                or any(fs.stat(f"{package}/__init__.{ext}") is not None for ext in ("py", "pyc"))
            )
        )
    return cache[package]


def _entry_point_file(rest: str) -> bool:
    """`rest` is a distribution's entry_points.txt at the top of a sys.path directory."""
    parts = rest.split("/")
    return (
        len(parts) == 2 and parts[1] == "entry_points.txt" and parts[0].endswith((".dist-info", ".egg-info"))
    )


def _registers_plugin(fs: ContainerFS, path: str) -> bool:
    content, problem = fs.read_regular(path, MAX_HOOK_FILE)
    return problem is not None or b"pytest11" in (content or b"")


def _pth_runs_code(fs: ContainerFS, path: str) -> bool:
    content, problem = fs.read_regular(path, MAX_HOOK_FILE)
    if problem is not None or content is None:
        return problem != "missing"
    for line in content.decode(errors="replace").splitlines():
        if re.match(r"import[ \t]", line) and line.strip() != _PTH_SETUPTOOLS.strip() and not _nspkg(line):
            return True
    return False


def _pth_roots(entries: list[tuple[str, str]], ground: Ground, fs: ContainerFS) -> set[str]:
    """The directories that `.pth` files added or changed in the site directories put on sys.path."""
    roots: set[str] = set()
    for path, kind in entries:
        site = posixpath.dirname(path)
        if kind == "deleted" or not path.endswith(".pth") or not re.search(r"/(site|dist)-packages$", site):
            continue
        if not any(site.startswith(p.rstrip("/") + "/lib/python3") for p in ground.python_prefixes):
            continue
        content, _ = fs.read_regular(path, MAX_HOOK_FILE)
        for line in (content or b"").decode(errors="replace").splitlines():
            line = line.rstrip()
            if line and not line.startswith("#") and not re.match(r"import[ \t]", line):
                roots.add(
                    fs.canonical(posixpath.normpath(posixpath.join(site, line)) + "/x").rsplit("/", 1)[0]
                )
    return roots


def _nspkg(line: str) -> bool:
    if re.findall(r"__import__\(\s*([^)]*?)\s*\)", line) != ["'importlib.util'", "'importlib.machinery'"]:
        return False  # setuptools' line imports exactly these; another name would run that module
    shape = re.sub(r"'[\w.]+'", "'N'", line.strip())
    shape = re.sub(r"\*\('N'(, 'N')*,?\)", "*('N',)", shape)
    return shape in (_NSPKG, _NSPKG + _NSPKG_SUFFIX)


def check_integrity(
    diff: list[tuple[str, int]], fs: ContainerFS, task: Task, env: dict[str, str], workdir: str
) -> IntegrityReport:
    """Classify every diff entry; the stored list keeps all ground entries and is capped for the rest."""
    entries = [(p, KINDS.get(k, "changed")) for p, k in diff if not under(p, ENGINE_MOUNTS)]
    changed = dict(entries)
    fs.trust_diff(changed)
    ground = resolve_ground(fs, task, env, workdir, changed)
    ground.pth_roots = _pth_roots(entries, ground, fs)
    allow = _allowances(task)
    hits: list[ChangedPath] = []
    rest: list[ChangedPath] = []
    bad: list[str] = []
    allowed: list[str] = []
    for path, kind in entries:
        if is_ground(path, kind, ground, fs, changed):
            hits.append(ChangedPath(path=path, change=kind, verifier_ground=True))
            (allowed if under(path, allow) else bad).append(path)
        else:
            rest.append(ChangedPath(path=path, change=kind))
    stored = (
        sorted(hits, key=lambda c: c.path)
        + sorted(rest, key=lambda c: c.path)[: max(0, MAX_STORED_PATHS - len(hits))]
    )
    return IntegrityReport(stored, len(entries), bad, allowed, changed)


def wrote_bytecode(changed: dict[str, str]) -> bool:
    """Did the run add or change a file Python reads as bytecode (`.pyc`; `.pyo` of older Pythons)? Its tests
    then get a fresh bytecode cache (verifier.py); a run without any leaves only the image's to read."""
    return any(kind != "deleted" and path.endswith((".pyc", ".pyo")) for path, kind in changed.items())


def _allowances(task: Task) -> list[str]:
    """The task's `[verifier] allow_changes` that are paths (exact path or directory prefix)."""
    return [a for a in task.verifier_allow_changes if a.startswith("/")]
