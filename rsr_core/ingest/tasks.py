"""Task directories: harbor (`task.toml`) and Terminal-Bench 1 (`task.yaml`) -> Task with hidden files.

A task directory comes from a stranger and its environment is built into the image an agent works in, so
nothing in it may reach outside it: a symlink that resolves outside the task (or dangles), or a special
file, refuses the whole task with the link and where it points. Links inside the task are fine.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from rsr_core.formats.control import task_id_of
from rsr_core.formats.reading import FormatError, decode_text, expect, preview
from rsr_core.ingest.fs import (
    Entry,
    inside,
    list_tree,
    read_input,
    read_text,
    real,
    shown,
    size_text,
    stream_input,
)
from rsr_core.models import Task, TaskFile

MAX_FILE_BYTES = 2_000_000
"""Task files larger than this are noted by size, not kept."""
MAX_META_BYTES = 2_000_000
"""task.toml, task.yaml and instruction.md larger than this refuse the task."""
_SKIP_DIRS = {"__pycache__", ".git", "node_modules", ".venv"}
MAX_CPUS = 1024.0
MAX_MEMORY_MB = 2**30
"""1 PiB: more is a typo or a hostile value (the store's 32-bit column holds at most twice this)."""
MAX_TIMEOUT_SEC = 7 * 86_400.0
"""A week: a task's time budget must be a budget (infinity would let a run go on for ever)."""
MAX_COUNT = 2**31 - 1
"""The most a count of a task (storage, processes, files) may be: what the store's 32-bit column holds."""
MAX_TASK_ENTRIES = 100_000
"""The most files, directories and links a task directory may hold."""
MAX_TASK_BYTES = 4 * 2**30
"""The most bytes a task's files (and links to files) may total: they are all hashed, and the build context
copies them (a sparse file or hard links to one big file cost no disk and any time)."""
MAX_KEPT_BYTES = 64 * 2**20
"""The most text kept of one task's files: past it, files are noted by size (hard links to one big file cost
no disk, yet each link's text would be kept in full)."""


def task_tree(directory: Path) -> list[Entry]:
    """Every entry of a task directory, in path order, after checking that none leads outside it.

    Raises FormatError naming the first link that resolves outside the task (or dangles) or special file."""
    root = real(directory)
    entries = sorted(list_tree(directory, MAX_TASK_ENTRIES), key=lambda e: PurePosixPath(e.rel).parts)
    total = 0
    for entry in entries:
        if entry.kind == "file" or (
            entry.kind == "link" and entry.target is not None and entry.target.is_file()
        ):
            total += entry.size if entry.kind == "file" else os.stat(entry.path).st_size
            if total > MAX_TASK_BYTES:
                raise FormatError(
                    f"{shown(entry.rel)}: the task's files total more than {size_text(MAX_TASK_BYTES)} "
                    f"({MAX_TASK_BYTES:,} bytes), the limit for a task (a sparse file, or links to one big "
                    "file?); task refused"
                )
        if entry.kind == "special":
            raise FormatError(
                f"{shown(entry.rel)}: {entry.what}; a task holds only files, directories and links inside it"
            )
        if entry.kind != "link":
            continue
        where = real(entry.path)
        if not inside(where, root):
            raise FormatError(
                f"{shown(entry.rel)}: symlink to {shown(os.readlink(entry.path))} resolves to {shown(where)}, "
                "outside the task directory; task refused"
            )
        if entry.target is None:
            raise FormatError(
                f"{shown(entry.rel)}: dangling symlink to {shown(os.readlink(entry.path))}; task refused"
            )
    return entries


def _stored(entry: Entry) -> bool:
    """Files kept with the task: regular files and links to files (dirs behind links are listed where they
    really are), outside tool and cache directories."""
    if any(part in _SKIP_DIRS for part in PurePosixPath(entry.rel).parts):
        return False
    return entry.kind == "file" or (
        entry.kind == "link" and entry.target is not None and entry.target.is_file()
    )


class _Kept:
    """How much of a task's file text is still kept (MAX_KEPT_BYTES in all)."""

    def __init__(self) -> None:
        self.left = MAX_KEPT_BYTES


def _task_files(found: list[tuple[Entry, str]], directory: Path) -> list[TaskFile]:
    """The files found, in that order; the hidden tests and solution are read first, so that the environment
    cannot use up what is kept (the critic matches runbooks against their text)."""
    kept = _Kept()
    order = sorted(range(len(found)), key=lambda i: found[i][1] == "environment")
    files: dict[int, TaskFile] = {i: _task_file(found[i][0], directory, found[i][1], kept) for i in order}
    return [files[i] for i in range(len(found))]


def _task_file(entry: Entry, directory: Path, role: str, kept: _Kept) -> TaskFile:
    size = entry.size if entry.kind == "file" else os.stat(entry.path).st_size
    if size > MAX_FILE_BYTES:
        return TaskFile(role=role, path=entry.rel, content=f"[file of {size} bytes not kept]")
    if size > kept.left:
        return TaskFile(
            role=role,
            path=entry.rel,
            content=f"[file of {size} bytes not kept: the task's kept files reached {size_text(MAX_KEPT_BYTES)}]",
        )
    kept.left -= size
    data = read_input(entry.path, directory, entry.rel, MAX_FILE_BYTES)
    try:
        content = decode_text(data)
    except FormatError:
        content = f"[binary file of {len(data)} bytes]"
    return TaskFile(role=role, path=entry.rel, content=content)


def content_hash(directory: Path) -> str:
    """SHA-256 over every file's path and bytes and every link's path and target text (a changed task
    directory is stored again). Reads nothing outside the task: such a task is refused first."""
    h = hashlib.sha256()
    for entry in task_tree(directory):
        if any(part in _SKIP_DIRS for part in PurePosixPath(entry.rel).parts):
            continue
        if entry.kind == "file":
            h.update(entry.rel.encode() + b"\0")
            for block in stream_input(entry.path, directory, entry.rel):
                h.update(block)
        elif entry.kind == "link":
            h.update(entry.rel.encode() + b"\0->" + os.fsencode(os.readlink(entry.path)))
    return h.hexdigest()


def _float(value: Any, where: str, limit: float) -> float | None:
    """A positive number up to `limit` (NaN, infinities, zero and negatives refused)."""
    if value is None:
        return None
    expect(
        isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= limit,
        where,
        f"a positive number up to {limit:,g}",
        value,
    )
    return float(value)


def _int(value: Any, where: str, limit: int = MAX_COUNT) -> int | None:
    if value is None:
        return None
    expect(
        isinstance(value, int) and not isinstance(value, bool) and 0 < value <= limit,
        where,
        f"a positive integer up to {limit:,}",
        value,
    )
    return int(value)


def _names(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    expect(
        isinstance(value, list) and all(isinstance(v, str) and re.fullmatch(r"[A-Z_]+", v) for v in value),
        where,
        "a list of capability names like SYS_PTRACE",
        value,
    )
    return list(value)


def _memory_mb(env: dict) -> int | None:
    if env.get("memory_mb") is not None:
        return int(_float(env["memory_mb"], "[environment] memory_mb", MAX_MEMORY_MB) or 0)
    mem = env.get("memory")
    if isinstance(mem, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", mem, re.I)
        if match is None:
            raise FormatError(
                f"[environment] memory: expected a size like '2G' or '512M', got {preview(mem)}"
            )
        scale = {"": 1 / 2**20, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[match.group(2).upper()]
        mb = float(match.group(1)) * scale
        if not 0 < mb <= MAX_MEMORY_MB:
            raise FormatError(
                f"[environment] memory: expected a size up to {MAX_MEMORY_MB // 2**20} TiB, got {preview(mem)}"
            )
        return int(mb)
    return None


def read_harbor_task(directory: Path) -> Task:
    """A harbor task: task.toml, instruction.md, environment/, tests/ (with test.sh), solution/."""
    entries = task_tree(directory)
    text = read_text(directory / "task.toml", directory, "task.toml", "TOML", MAX_META_BYTES)
    try:
        meta = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer of too many digits
        raise FormatError(f"task.toml: invalid TOML: {str(exc)[:200]}") from None
    except RecursionError:
        raise FormatError("task.toml: invalid TOML: nested too deeply") from None
    instruction_path = directory / "instruction.md"
    if not instruction_path.is_file():
        raise FormatError("instruction.md: missing; a harbor task needs its public instruction")
    if not (directory / "tests" / "test.sh").is_file():
        raise FormatError(
            "tests/test.sh: missing; a harbor task needs its verifier script (it writes the reward)"
        )
    section = {k: meta.get(k) or {} for k in ("task", "metadata", "verifier", "agent", "environment")}
    for name, value in section.items():
        expect(isinstance(value, dict), f"task.toml [{name}]", "a table", value)
    name = section["task"].get("name") or meta.get("name") or directory.name
    expect(isinstance(name, str), "task.toml [task] name", "a string", name)
    md, env = section["metadata"], section["environment"]
    allow_changes = section["verifier"].get("allow_changes") or []
    expect(
        isinstance(allow_changes, list)
        and all(isinstance(a, str) and a.startswith("/") for a in allow_changes),
        "task.toml [verifier] allow_changes",
        "a list of absolute paths",
        allow_changes,
    )
    tags = md.get("tags") or []
    expect(isinstance(tags, list), "task.toml [metadata] tags", "a list of strings", tags)
    allow = env.get("allow_internet")
    if allow is None and env.get("network_mode") is not None:
        allow = env["network_mode"] not in ("none", "no-network", "disabled")
    roles = {"environment": "environment", "tests": "test", "solution": "solution"}
    files = _task_files(
        [
            (e, roles[top])
            for top in roles
            for e in entries
            if _stored(e) and PurePosixPath(e.rel).parts[0] == top and "/" in e.rel
        ],
        directory,
    )
    return Task(
        task_id=task_id_of(name),
        name=name,
        instruction=read_text(instruction_path, directory, "instruction.md", "Markdown", MAX_META_BYTES),
        category=str(md["category"]) if md.get("category") is not None else None,
        difficulty=str(md["difficulty"]) if md.get("difficulty") is not None else None,
        tags=[str(t) for t in tags],
        source_format="harbor",
        path=str(directory.resolve()),
        docker_image=env.get("docker_image") or None,
        cpus=_float(env.get("cpus"), "[environment] cpus", MAX_CPUS),
        memory_mb=_memory_mb(env),
        storage_mb=_int(env.get("storage_mb"), "[environment] storage_mb"),
        max_files=_int(env.get("max_files"), "[environment] max_files"),
        pids_limit=_int(env.get("pids_limit"), "[environment] pids_limit"),
        cap_add=_names(env.get("cap_add"), "[environment] cap_add"),
        allow_internet=bool(allow),
        agent_timeout_sec=_float(section["agent"].get("timeout_sec"), "[agent] timeout_sec", MAX_TIMEOUT_SEC),
        verifier_timeout_sec=_float(
            section["verifier"].get("timeout_sec"), "[verifier] timeout_sec", MAX_TIMEOUT_SEC
        ),
        verifier_allow_changes=list(allow_changes),
        files=files,
    )


def read_tb1_task(directory: Path) -> Task:
    """A Terminal-Bench 1 task: task.yaml, Dockerfile, run-tests.sh, tests/, solution.sh|solution.yaml."""
    entries = task_tree(directory)
    meta = _load_yaml(read_text(directory / "task.yaml", directory, "task.yaml", "YAML", MAX_META_BYTES))
    expect(isinstance(meta, dict), "task.yaml", "a mapping with instruction, difficulty, category", meta)
    if not (directory / "run-tests.sh").is_file():
        raise FormatError("run-tests.sh: missing; a Terminal-Bench task needs its test runner")
    instruction = meta.get("instruction")
    if instruction is None and isinstance(meta.get("descriptions"), list) and meta["descriptions"]:
        instruction = meta["descriptions"][0].get("description")  # older TB1 layout
    expect(isinstance(instruction, str), "task.yaml instruction", "a string", instruction)
    tags = meta.get("tags") or []
    expect(isinstance(tags, list), "task.yaml tags", "a list of strings", tags)
    found: list[tuple[Entry, str]] = []
    for entry in entries:
        if not _stored(entry):
            continue
        top = PurePosixPath(entry.rel).parts[0]
        if top == "task.yaml":
            continue
        if top in ("tests", "run-tests.sh"):
            role = "test"
        elif top.startswith("solution"):
            role = "solution"
        else:
            role = "environment"
        found.append((entry, role))
    name = meta.get("task_id") if isinstance(meta.get("task_id"), str) else directory.name
    return Task(
        task_id=task_id_of(name),
        name=name,
        instruction=instruction,
        category=str(meta["category"]) if meta.get("category") is not None else None,
        difficulty=str(meta["difficulty"]) if meta.get("difficulty") is not None else None,
        tags=[str(t) for t in tags],
        source_format="terminal-bench-1",
        path=str(directory.resolve()),
        agent_timeout_sec=_float(
            meta.get("max_agent_timeout_sec"), "task.yaml max_agent_timeout_sec", MAX_TIMEOUT_SEC
        ),
        verifier_timeout_sec=_float(
            meta.get("max_test_timeout_sec"), "task.yaml max_test_timeout_sec", MAX_TIMEOUT_SEC
        ),
        files=_task_files(found, directory),
    )


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases: a task file has no use for them, and a few nested aliases
    ("billion laughs") make a small file stand for billions of values."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise FormatError(
                f"task.yaml: line {event.start_mark.line + 1}: YAML alias *{shown(event.anchor)[:40]} "
                "is not accepted in a task file (expected plain values, no anchors and aliases)"
            )
        return super().compose_node(parent, index)


def _load_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: no arbitrary objects
    except FormatError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = str(getattr(exc, "problem", None) or exc)[:200]
        raise FormatError(f"task.yaml: invalid YAML{where}: {problem}") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise FormatError(f"task.yaml: invalid YAML: {str(exc)[:200]}") from None
    except RecursionError:
        raise FormatError("task.yaml: invalid YAML: nested too deeply") from None


def read_task_dir(directory: Path) -> Task:
    """A harbor or Terminal-Bench 1 task directory, whichever it is."""
    if (directory / "task.toml").is_file():
        return read_harbor_task(directory)
    if (directory / "task.yaml").is_file():
        return read_tb1_task(directory)
    raise FormatError(f"{directory}: not a task directory (expected task.toml or task.yaml)")
