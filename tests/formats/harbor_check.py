"""Validate files with harbor's own models. Runs inside the harbor side venv (Python >= 3.12), not ours.

Usage: python harbor_check.py PATH... ; prints one JSON object:
{"harbor": version, "checked": {"trial_result": n, "job_result": n, "trajectory": n}, "errors": [{"path", "error"}]}

`python harbor_check.py --field-versions` prints, for every ATIF model harbor defines, the fields whose
description says which ATIF version added them: {"Step": {"is_copied_context": 5, ...}, ...}.

A `result.json` with `trial_name` is a trial result (`TrialResult`), any other `result.json` a job result
(`JobResult`); `trajectory.json` and `*.atif.json` are ATIF trajectories (`Trajectory`, plus harbor's own
trajectory validator, which also checks that referenced media files exist).
"""

from __future__ import annotations

import json
import re
import sys
from importlib.metadata import version
from pathlib import Path


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        if path.is_file():
            out.append(path)
        else:
            out.extend(sorted(p for p in path.rglob("*") if p.is_file()))
    return out


def field_versions() -> dict[str, dict[str, int]]:
    """Which ATIF minor version added each field, as harbor's own models document it."""
    import harbor.models.trajectories as atif
    from pydantic import BaseModel

    added = re.compile(r"added in ATIF-v1\.(\d+)", re.IGNORECASE)
    out: dict[str, dict[str, int]] = {}
    for name in dir(atif):
        model = getattr(atif, name)
        if isinstance(model, type) and issubclass(model, BaseModel):
            for field, info in model.model_fields.items():
                found = [int(m) for m in added.findall(info.description or "")]
                if found:
                    out.setdefault(name, {})[field] = min(found)
    return out


def main(argv: list[str]) -> int:
    if argv == ["--field-versions"]:
        print(json.dumps(field_versions()))
        return 0
    from harbor.models.job.result import JobResult
    from harbor.models.trajectories import Trajectory
    from harbor.models.trial.result import TrialResult
    from harbor.utils.trajectory_validator import TrajectoryValidator
    from pydantic import ValidationError

    checked = {"trial_result": 0, "job_result": 0, "trajectory": 0}
    errors: list[dict[str, str]] = []
    for path in _files([Path(a) for a in argv]):
        is_result = path.name == "result.json"
        is_trajectory = path.name == "trajectory.json" or path.name.endswith(".atif.json")
        if not (is_result or is_trajectory):
            continue
        try:
            text = path.read_text()
            doc = json.loads(text)
            if is_trajectory:
                checked["trajectory"] += 1
                Trajectory.model_validate(doc)
                validator = TrajectoryValidator()
                if not validator.validate(path):
                    errors.append({"path": str(path), "error": "; ".join(validator.errors)})
            elif isinstance(doc, dict) and "trial_name" in doc:
                checked["trial_result"] += 1
                TrialResult.model_validate_json(text)
            else:
                checked["job_result"] += 1
                JobResult.model_validate_json(text)
        except (ValidationError, ValueError) as exc:
            errors.append({"path": str(path), "error": str(exc)})
    print(json.dumps({"harbor": version("harbor"), "checked": checked, "errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
