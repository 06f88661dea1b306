"""Trajectory -> ATIF document (ATIF-v1.6) with RSR provenance in root `extra.rsr`.

Written so that `rsr ingest` reads back exactly what was stored: every trajectory field ATIF has no place
for travels in `extra.rsr`, and a step whose fields the reader would derive differently from its message
(analysis, plan, commands, …) carries the stored values in step `extra.rsr_step`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from rsr_core.export.models import ATIF_VERSION
from rsr_core.ingest.atif import parse_steps
from rsr_core.models import Review, Step, Trajectory, TransferVerdict

# Step fields the ATIF reader derives (from the message, tool calls and heuristics) rather than reads as such.
DERIVED_STEP_FIELDS = (
    "index",
    "analysis",
    "plan",
    "commands",
    "observation",
    "task_complete",
    "harness_control",
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _tool_calls(step: Step, step_id: int) -> list[dict[str, Any]]:
    calls = [
        {
            "tool_call_id": f"call_{step_id}_{i}",
            "function_name": c.function_name,
            "arguments": {"keystrokes": c.keystrokes, "duration": c.duration},
        }
        for i, c in enumerate(step.commands, 1)
    ]
    if step.task_complete and step.source == "agent":
        calls.append(
            {"tool_call_id": f"call_{step_id}_done", "function_name": "mark_task_complete", "arguments": {}}
        )
    return calls


def step_document(step: Step, step_id: int) -> dict[str, Any]:
    """One ATIF step; private guidance and harness control are marked in step extra."""
    doc: dict[str, Any] = {"step_id": step_id}
    if step.timestamp is not None:
        doc["timestamp"] = step.timestamp
    doc["source"] = step.source
    if step.model_name is not None:
        doc["model_name"] = step.model_name
    doc["message"] = step.message
    if step.reasoning is not None:
        doc["reasoning_content"] = step.reasoning
    calls = _tool_calls(step, step_id)
    if calls:
        doc["tool_calls"] = calls
    if step.observation is not None:
        result: dict[str, Any] = {"content": step.observation}
        if calls:
            result = {"source_call_id": calls[0]["tool_call_id"], **result}
        doc["observation"] = {"results": [result]}
    if step.copied_context:
        doc["is_copied_context"] = True
    extra = dict(step.extra)
    metrics = {
        "prompt_tokens": step.prompt_tokens,
        "completion_tokens": step.completion_tokens,
        "cost_usd": step.cost_usd,
        "cached_tokens": extra.pop("cached_tokens", None),
    }
    metrics = {k: v for k, v in metrics.items() if v is not None}
    if metrics:
        doc["metrics"] = metrics
    for key, value in (extra.pop("_atif", None) or {}).items():
        doc.setdefault(key, value)
    if step.harness_control:
        extra["harness_control"] = True
    if step.private_guidance:
        extra["rsr_private_guidance"] = True
    if step.task_complete and step.source != "agent":
        extra["task_complete"] = True
    if extra:
        doc["extra"] = extra
    return doc


def _patch_derived(docs: list[dict[str, Any]], steps: list[Step]) -> None:
    """Where reading a step back would not give the stored value of a derived field, carry the value."""
    for doc, step, read in zip(docs, steps, parse_steps(docs), strict=True):
        wrong = {f: getattr(step, f) for f in DERIVED_STEP_FIELDS if getattr(read, f) != getattr(step, f)}
        if wrong:
            if "commands" in wrong:
                wrong["commands"] = [c.model_dump() for c in step.commands]
            doc.setdefault("extra", {})["rsr_step"] = wrong


def provenance(trajectory: Trajectory) -> dict[str, Any]:
    """Root `extra.rsr`: the DESIGN convention plus what ATIF has no field for."""
    t = trajectory
    rsr: dict[str, Any] = {"task_id": t.task_id, "harness": t.harness, "kind": t.kind, "reward": t.reward}
    if t.source_trajectory_id is not None or t.runbook_id is not None:
        rsr.update(source_trajectory_id=t.source_trajectory_id, runbook_id=t.runbook_id)
    rsr.update(
        job_id=t.job_id,
        scripted=t.scripted,
        model=t.model,
        instruction=t.instruction,
        started_at=t.started_at,
        finished_at=t.finished_at,
        exception=t.exception,
        verifier_output=t.verifier_output,
        source_schema_version=t.extra.get("schema_version"),
        content_hash=t.content_hash or None,
    )
    if t.verifier_tampered or t.changed_paths:
        rsr["verifier_tampered"] = t.verifier_tampered
        rsr["changed_paths"] = [c.model_dump() for c in t.changed_paths]
    if t.session_id is None:
        rsr["session_id"] = None  # the root session_id below is the trajectory id, not a recorded one
    if t.agent_name is None:
        rsr["agent_name"] = None
    return rsr


def trajectory_document(
    trajectory: Trajectory,
    steps: list[Step] | None = None,
    transfer: TransferVerdict | None = None,
    reviews: list[Review] | None = None,
) -> dict[str, Any]:
    """The ATIF document of a trajectory.

    `steps` replaces the stored steps (the training view); they are numbered 1..n as ATIF requires, the
    stored index travelling in `rsr_step` where it differs. A transfer verdict and the runbook's review
    history, when given, travel in `extra.rsr.transfer_check` and `extra.rsr.reviews`.
    """
    t = trajectory
    steps = t.steps if steps is None else steps
    extra = dict(t.extra)
    notes, final_metrics = extra.pop("notes", None), extra.pop("final_metrics", None)
    agent_extra = extra.pop("agent_extra", None)
    extra.pop("schema_version", None)
    agent: dict[str, Any] = {"name": t.agent_name if t.agent_name is not None else t.harness}
    if t.agent_version is not None:
        agent["version"] = t.agent_version
    if t.model is not None:
        agent["model_name"] = t.model
    if agent_extra:
        agent["extra"] = agent_extra
    step_docs = [step_document(s, i) for i, s in enumerate(steps, 1)]
    _patch_derived(step_docs, steps)
    rsr = provenance(t)
    if transfer is not None:
        rsr["transfer_check"] = transfer.model_dump(mode="json", exclude={"schema_version", "trajectory_id"})
    if reviews:
        rsr["reviews"] = [
            r.model_dump(mode="json", include={"decision", "reviewer", "reason", "created_at"})
            for r in reviews
        ]
    doc: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": t.session_id if t.session_id is not None else t.trajectory_id,
        "trajectory_id": t.trajectory_id,
        "agent": agent,
        "steps": step_docs,
    }
    if notes is not None:
        doc["notes"] = notes
    if final_metrics is not None:
        doc["final_metrics"] = final_metrics
    doc["extra"] = {**extra, "rsr": rsr}
    return doc


def safe_name(name: str, limit: int = 120) -> str:
    """A file-name-safe form of an id; altered ids get a short hash so distinct ids never collide."""
    safe = _UNSAFE.sub("_", name).strip("._") or "_"
    if safe == name and len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{safe[:limit]}-{digest}"


def relative_path(trajectory: Trajectory) -> str:
    """Where a trajectory's file goes inside the export directory: <task>/<trajectory>.atif.json."""
    task = safe_name(trajectory.task_id) if trajectory.task_id else "_no_task"
    return f"{task}/{safe_name(trajectory.trajectory_id)}.atif.json"
