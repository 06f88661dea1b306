"""Task directories: harbor (`task.toml`) and Terminal-Bench 1 (`task.yaml`) -> Task with hidden files."""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from rsr_core.ingest.control import task_id_of
from rsr_core.ingest.reading import FormatError, decode_text, expect, read_text
from rsr_core.models import Task, TaskFile

MAX_FILE_BYTES = 2_000_000
_SKIP_DIRS = {"__pycache__", ".git", "node_modules", ".venv"}


def _files_under(root: Path, base: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part in _SKIP_DIRS for part in p.relative_to(base).parts)
    )


def _task_file(path: Path, base: Path, role: str) -> TaskFile:
    data = path.read_bytes()
    rel = path.relative_to(base).as_posix()
    if len(data) > MAX_FILE_BYTES:
        content = f"[file of {len(data)} bytes not kept]"
    else:
        try:
            content = decode_text(data)
        except FormatError:
            content = f"[binary file of {len(data)} bytes]"
    return TaskFile(role=role, path=rel, content=content)


def content_hash(directory: Path) -> str:
    """SHA-256 over every file's path and bytes (a changed task directory is stored again)."""
    h = hashlib.sha256()
    for path in _files_under(directory, directory):
        h.update(path.relative_to(directory).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def _float(value: Any, where: str) -> float | None:
    if value is None:
        return None
    expect(isinstance(value, int | float) and not isinstance(value, bool), where, "a number", value)
    return float(value)


def _int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    expect(
        isinstance(value, int) and not isinstance(value, bool) and value > 0,
        where,
        "a positive integer",
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
        return int(_float(env["memory_mb"], "[environment] memory_mb"))
    mem = env.get("memory")
    if isinstance(mem, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", mem, re.I)
        expect(match is not None, "[environment] memory", "a size like '2G' or '512M'", mem)
        scale = {"": 1 / 2**20, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[match.group(2).upper()]
        return int(float(match.group(1)) * scale)
    return None


def read_harbor_task(directory: Path) -> Task:
    """A harbor task: task.toml, instruction.md, environment/, tests/, solution/."""
    try:
        meta = tomllib.loads(read_text(directory / "task.toml", "TOML"))
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(f"task.toml: invalid TOML: {exc}") from None
    instruction_path = directory / "instruction.md"
    if not instruction_path.is_file():
        raise FormatError("instruction.md: missing; a harbor task needs its public instruction")
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
    files = [
        _task_file(p, directory, "environment") for p in _files_under(directory / "environment", directory)
    ]
    files += [_task_file(p, directory, "test") for p in _files_under(directory / "tests", directory)]
    files += [_task_file(p, directory, "solution") for p in _files_under(directory / "solution", directory)]
    return Task(
        task_id=task_id_of(name),
        name=name,
        instruction=read_text(instruction_path, "Markdown"),
        category=str(md["category"]) if md.get("category") is not None else None,
        difficulty=str(md["difficulty"]) if md.get("difficulty") is not None else None,
        tags=[str(t) for t in tags],
        source_format="harbor",
        path=str(directory.resolve()),
        docker_image=env.get("docker_image") or None,
        cpus=_float(env.get("cpus"), "[environment] cpus"),
        memory_mb=_memory_mb(env),
        storage_mb=_int(env.get("storage_mb"), "[environment] storage_mb"),
        pids_limit=_int(env.get("pids_limit"), "[environment] pids_limit"),
        cap_add=_names(env.get("cap_add"), "[environment] cap_add"),
        allow_internet=bool(allow),
        agent_timeout_sec=_float(section["agent"].get("timeout_sec"), "[agent] timeout_sec"),
        verifier_timeout_sec=_float(section["verifier"].get("timeout_sec"), "[verifier] timeout_sec"),
        verifier_allow_changes=list(allow_changes),
        files=files,
    )


def read_tb1_task(directory: Path) -> Task:
    """A Terminal-Bench 1 task: task.yaml, Dockerfile, run-tests.sh, tests/, solution.sh|solution.yaml."""
    try:
        meta = yaml.safe_load(read_text(directory / "task.yaml", "YAML"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise FormatError(f"task.yaml: invalid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    expect(isinstance(meta, dict), "task.yaml", "a mapping with instruction, difficulty, category", meta)
    instruction = meta.get("instruction")
    if instruction is None and isinstance(meta.get("descriptions"), list) and meta["descriptions"]:
        instruction = meta["descriptions"][0].get("description")  # older TB1 layout
    expect(isinstance(instruction, str), "task.yaml instruction", "a string", instruction)
    tags = meta.get("tags") or []
    expect(isinstance(tags, list), "task.yaml tags", "a list of strings", tags)
    files: list[TaskFile] = []
    for path in _files_under(directory, directory):
        rel = path.relative_to(directory)
        top = rel.parts[0]
        if top == "task.yaml":
            continue
        if top in ("tests", "run-tests.sh"):
            role = "test"
        elif top.startswith("solution"):
            role = "solution"
        else:
            role = "environment"
        files.append(_task_file(path, directory, role))
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
        agent_timeout_sec=_float(meta.get("max_agent_timeout_sec"), "task.yaml max_agent_timeout_sec"),
        verifier_timeout_sec=_float(meta.get("max_test_timeout_sec"), "task.yaml max_test_timeout_sec"),
        files=files,
    )


def read_task_dir(directory: Path) -> Task:
    """A harbor or Terminal-Bench 1 task directory, whichever it is."""
    if (directory / "task.toml").is_file():
        return read_harbor_task(directory)
    if (directory / "task.yaml").is_file():
        return read_tb1_task(directory)
    raise FormatError(f"{directory}: not a task directory (expected task.toml or task.yaml)")
