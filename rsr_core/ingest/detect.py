"""Format detection: walk paths recursively and name the unit each file or directory is."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rsr_core.ingest.harbor import is_trial_result
from rsr_core.ingest.tb1 import is_trial_results

UnitKind = Literal["atif", "harbor_trial", "tb1_trial", "harbor_task", "tb1_task", "error"]

# Loose files of these kinds sit beside trajectories (notes, logs) and are not ingested when a directory is
# walked. Named explicitly on the command line, any file must be ingestible.
_ASIDE = {".md", ".txt", ".log", ".cast", ".lock", ".yaml", ".yml", ".toml", ".py", ".sh", ".csv", ".html"}
EXPECTED = (
    "expected an ATIF trajectory.json, a harbor job/trial/task directory "
    "or a Terminal-Bench 1 run/task directory"
)


@dataclass(frozen=True)
class Unit:
    """One thing to ingest (a file or a directory) and its detected format."""

    kind: UnitKind
    path: Path
    error: str | None = None


def _peek_json(path: Path) -> object:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _dir_kind(directory: Path) -> UnitKind | None:
    if (directory / "task.toml").is_file():
        return "harbor_task"
    if (directory / "task.yaml").is_file():
        return "tb1_task"
    result = directory / "result.json"
    if result.is_file() and ((directory / "agent").is_dir() or is_trial_result(_peek_json(result))):
        return "harbor_trial"
    results = directory / "results.json"
    if results.is_file() and ((directory / "agent-logs").is_dir() or is_trial_results(_peek_json(results))):
        return "tb1_trial"
    return None


def _is_container(directory: Path) -> bool:
    """A harbor job dir or a Terminal-Bench run dir: its own summary files are not trajectories."""
    return any((directory / n).is_file() for n in ("result.json", "results.json", "run_metadata.json"))


def _walk(directory: Path, out: list[Unit]) -> int:
    kind = _dir_kind(directory)
    if kind is not None:
        out.append(Unit(kind, directory))
        return 1
    try:
        children = sorted(directory.iterdir())
    except OSError as exc:
        out.append(Unit("error", directory, f"cannot read directory: {exc.strerror}"))
        return 1
    if not children:
        out.append(Unit("error", directory, f"empty directory; {EXPECTED}"))
        return 1
    container = _is_container(directory)
    found = 0
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_dir():
            found += _walk(child, out)
        elif child.is_file():
            if container and child.suffix in (".json", ".log", "") and child.name != "trajectory.json":
                continue
            if child.suffix.lower() in _ASIDE:
                continue
            out.append(Unit("atif", child))
            found += 1
    return found


def detect_units(paths: list[Path]) -> list[Unit]:
    """Every unit under the given paths, in a stable order; errors for missing paths and empty dirs."""
    units: list[Unit] = []
    for path in paths:
        if not path.exists():
            units.append(Unit("error", path, "no such file or directory"))
        elif path.is_file():
            units.append(Unit("atif", path))
        elif path.is_dir():
            if _walk(path, units) == 0:
                units.append(Unit("error", path, f"directory holds nothing to ingest; {EXPECTED}"))
        else:
            units.append(Unit("error", path, f"not a regular file or directory; {EXPECTED}"))
    return units
