"""RSR provenance beyond the DESIGN convention: what `rsr export` writes so that ingest reads back exactly what
was stored (trajectory fields in root `extra.rsr`, step fields in step `extra.rsr_step`, and the pipeline
verdicts an archive carries)."""

from __future__ import annotations

from typing import Any

from rsr_core.formats.reading import FormatError, expect
from rsr_core.formats.rewards import checked_reward
from rsr_core.models import KINDS, ChangedPath, Command, Review, TransferVerdict

# Step fields an RSR export carries in step `extra.rsr_step` when reading would derive them differently, or
# when ATIF has no place for them on that step (a model name, reasoning or metrics on a non-agent step, a
# timestamp that is not ISO 8601).
STORED_STEP_FIELDS: dict[str, type | tuple[type, ...]] = {
    "index": int,
    "analysis": (str, type(None)),
    "plan": (str, type(None)),
    "commands": list,
    "observation": (str, type(None)),
    "task_complete": bool,
    "harness_control": bool,
    "model_name": (str, type(None)),
    "reasoning": (str, type(None)),
    "timestamp": (str, type(None)),
    "prompt_tokens": (int, type(None)),
    "completion_tokens": (int, type(None)),
    "cost_usd": (int, float, type(None)),
}


def stored_step_values(raw: Any, where: str) -> dict[str, Any]:
    """Validated step `extra.rsr_step`: the stored values of fields reading would derive differently."""
    if raw is None:
        return {}
    expect(isinstance(raw, dict), where, "an object", raw)
    out = {}
    for key, value in raw.items():
        expect(key in STORED_STEP_FIELDS, f"{where}.{key}", "a stored step field", key)
        expect(
            isinstance(value, STORED_STEP_FIELDS[key]),
            f"{where}.{key}",
            "a value of the field's type",
            value,
        )
        out[key] = value
    if "commands" in out:
        cmds = out["commands"]
        expect(all(isinstance(c, dict) for c in cmds), f"{where}.commands", "command objects", cmds)
        try:
            out["commands"] = [Command(**c) for c in cmds]
        except (TypeError, ValueError):
            raise FormatError(
                f"{where}.commands: expected {{keystrokes, duration, function_name}} objects"
            ) from None
    return out


# Trajectory fields an RSR export carries in `extra.rsr` (ATIF has no place for them, or only a derived one);
# when a key is present its value is the stored one, null included.
STORED_TRAJECTORY_FIELDS = (
    "session_id",
    "agent_name",
    "agent_version",
    "model",
    "instruction",
    "started_at",
    "finished_at",
    "exception",
    "verifier_output",
    "source_schema_version",
)


def rsr_extra(obj: dict) -> dict:
    """The RSR provenance block `extra.rsr`, validated."""
    extra = obj.get("extra") or {}
    expect(isinstance(extra, dict), "extra", "an object", extra)
    rsr = extra.get("rsr") or {}
    expect(isinstance(rsr, dict), "extra.rsr", "an object", rsr)
    if rsr.get("kind") is not None:
        expect(rsr["kind"] in KINDS, "extra.rsr.kind", "discovery, rewrite or eval", rsr["kind"])
    if rsr.get("reward") is not None:
        rsr["reward"] = checked_reward(rsr["reward"], "extra.rsr.reward")
    for key in (
        "task_id",
        "harness",
        "source_trajectory_id",
        "runbook_id",
        "job_id",
        "content_hash",
        *STORED_TRAJECTORY_FIELDS,
    ):
        if rsr.get(key) is not None:
            expect(isinstance(rsr[key], str), f"extra.rsr.{key}", "a string", rsr[key])
    if rsr.get("verifier_tampered") is not None:
        expect(
            isinstance(rsr["verifier_tampered"], bool),
            "extra.rsr.verifier_tampered",
            "true or false",
            rsr["verifier_tampered"],
        )
    if rsr.get("changed_paths") is not None:
        rsr["changed_paths"] = changed_paths(rsr["changed_paths"], "extra.rsr.changed_paths")
    return rsr


def changed_paths(raw: Any, where: str) -> list[ChangedPath]:
    """Validated `changed_paths` entries ({path, change, verifier_ground})."""
    expect(isinstance(raw, list), where, "a list of {path, change, verifier_ground} objects", raw)
    out = []
    for i, item in enumerate(raw):
        expect(isinstance(item, dict), f"{where}[{i}]", "an object {path, change, verifier_ground}", item)
        expect(isinstance(item.get("path"), str), f"{where}[{i}].path", "a string", item.get("path"))
        expect(
            item.get("change") in ("added", "changed", "deleted"),
            f"{where}[{i}].change",
            "added, changed or deleted",
            item.get("change"),
        )
        ground = item.get("verifier_ground", False)
        expect(isinstance(ground, bool), f"{where}[{i}].verifier_ground", "true or false", ground)
        out.append(ChangedPath(path=item["path"], change=item["change"], verifier_ground=ground))
    return out


def carried_hash(rsr: dict) -> str | None:
    """The content hash an RSR-written file carries (`extra.rsr.content_hash`): re-reading what this tool wrote
    is then recognised as the trajectory it already stores."""
    value = rsr.get("content_hash")
    return value if isinstance(value, str) and value else None


def carried_verdicts(rsr: dict, trajectory_id: str) -> tuple[TransferVerdict | None, list[Review]]:
    """The answer-transfer verdict (`extra.rsr.transfer_check`) and the runbook's review history
    (`extra.rsr.reviews`, oldest first) an archive export carries; (None, []) when absent."""
    transfer = None
    raw = rsr.get("transfer_check")
    if raw is not None:
        expect(isinstance(raw, dict), "extra.rsr.transfer_check", "an object", raw)
        try:
            transfer = TransferVerdict(trajectory_id=trajectory_id, **raw)
        except (TypeError, ValueError) as exc:
            raise FormatError(f"extra.rsr.transfer_check: {_first_error(exc)}") from None
    reviews: list[Review] = []
    raw = rsr.get("reviews")
    if raw is not None:
        expect(isinstance(raw, list), "extra.rsr.reviews", "a list of review objects", raw)
        expect(
            isinstance(rsr.get("runbook_id"), str), "extra.rsr.runbook_id", "a string (reviews need it)", None
        )
        for i, item in enumerate(raw):
            expect(isinstance(item, dict), f"extra.rsr.reviews[{i}]", "an object", item)
            try:
                reviews.append(Review(runbook_id=rsr["runbook_id"], **item))
            except (TypeError, ValueError) as exc:
                raise FormatError(f"extra.rsr.reviews[{i}]: {_first_error(exc)}") from None
    return transfer, reviews


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        err = errors()[0]
        return f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}"
    return str(exc)
