"""Trajectory -> ATIF document (ATIF-v1.7, or the newer version of the file it came from) with RSR
provenance in root `extra.rsr`.

The version declared is the one whose fields are used: a root `trajectory_id` (v1.7), `is_copied_context`
(v1.5), content parts (v1.6). A trajectory ingested from a newer file keeps that file's version, since its
structures (`extra["_atif"]`: media parts, subagent trajectories, original tool calls) are written back as
they were. Documents validate with harbor's `Trajectory` model: only agent steps carry a model name,
reasoning, metrics or tool calls, the agent always has a version, timestamps are ISO 8601.

Written so that `rsr ingest` reads back exactly what was stored: every trajectory field ATIF has no place
for travels in `extra.rsr`, and a step whose fields the reader would derive differently from its message
(analysis, plan, commands, …), or that ATIF cannot carry on that step, carries the stored values in step
`extra.rsr_step`.

A harness message that follows an agent turn (Terminus 2's "are you sure?", RSRT's verifier feedback, StateM's
phase notes) reached the model in the same user message as that turn's observation, so it is written where
harbor's own Terminus 2 writes its confirmation: inside the observation, after the terminal output. Stored as a
step of its own, it travels in the agent step's `extra.rsr_harness_steps`, from which the reader restores it
(a reader of ATIF sees one user turn per agent turn, never two in a row).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from rsr_core.formats.atif_read import (
    HARNESS_STEPS,
    canonical_observation,
    canonical_tool_calls,
    parse_steps,
    version_minor,
)
from rsr_core.formats.training import CONVERSATION_START, HANDOFF
from rsr_core.models import Review, Step, Trajectory, TransferVerdict

ATIF_VERSION = "ATIF-v1.7"
"""The ATIF version written (the version of the fields used; a newer source's own version is kept)."""

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
AGENT_ONLY = ("model_name", "reasoning", "prompt_tokens", "completion_tokens", "cost_usd")
"""Step fields ATIF allows only on agent steps; other steps carry them in `extra.rsr_step`."""


def declared_version(source_version: Any) -> str:
    """ATIF_VERSION, or the version of the file the trajectory came from when that is newer."""
    ours, theirs = version_minor(ATIF_VERSION) or 0, version_minor(source_version)
    return str(source_version) if theirs is not None and theirs > ours else ATIF_VERSION


def is_iso_timestamp(value: str) -> bool:
    """Does ATIF (harbor's model) accept this as an ISO 8601 timestamp?"""
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def foldable(step: Step) -> bool:
    """A harness message that reads back exactly from its `HARNESS_STEPS` entry (message, timestamp, extra):
    a user step marked `harness_control` and nothing else ATIF would have to carry."""
    return (
        step.source == "user"
        and step.harness_control
        and not (step.private_guidance or step.copied_context or step.task_complete or step.commands)
        and step.observation is None
        and step.analysis is None
        and step.plan is None
        and all(getattr(step, f) is None for f in AGENT_ONLY)
        and (step.timestamp is None or is_iso_timestamp(step.timestamp))
        and not step.extra.keys() & {"_atif", CONVERSATION_START, HANDOFF}
    )


def _hosts(step: Step) -> bool:
    """Can this step's observation take the harness messages that follow it? An agent turn whose observation
    is written from its stored text (not a kept structure, not a hand-off's subagent reference)."""
    kept = step.extra.get("_atif")
    return (
        step.source == "agent"
        and step.observation is not None
        and not (isinstance(kept, dict) and "observation" in kept)
        and HANDOFF not in step.extra
    )


def fold_steps(steps: list[Step]) -> list[tuple[Step, list[Step]]]:
    """Each step written as an ATIF step, with the harness messages folded into its observation."""
    groups: list[tuple[Step, list[Step]]] = []
    for step in steps:
        if groups and foldable(step) and _hosts(groups[-1][0]):
            groups[-1][1].append(step)
        else:
            groups.append((step, []))
    return groups


def _harness_entries(folded: list[Step], first_index: int) -> list[dict[str, Any]]:
    """`HARNESS_STEPS` entries of folded steps; `first_index`: the index the reader gives the first of them."""
    entries = []
    for i, step in enumerate(folded):
        entry: dict[str, Any] = {"message": step.message}
        if step.timestamp is not None:
            entry["timestamp"] = step.timestamp
        if step.extra:
            entry["extra"] = step.extra
        if step.index != first_index + i:
            entry["index"] = step.index
        entries.append(entry)
    return entries


def step_document(
    step: Step, step_id: int, folded: list[Step] | None = None, index: int = 0
) -> dict[str, Any]:
    """One ATIF step; private guidance and harness control are marked in step extra. `folded`: the harness
    messages that followed this agent turn, written into its observation (`index`: the stored position the
    reader gives this step, 1-based)."""
    extra = dict(step.extra)
    kept = dict(extra.pop("_atif", None) or {})
    agent = step.source == "agent"
    stored: dict[str, Any] = {}  # what ATIF cannot carry on this step, for `extra.rsr_step`
    doc: dict[str, Any] = {"step_id": step_id}
    if step.timestamp is not None:
        if is_iso_timestamp(step.timestamp):
            doc["timestamp"] = step.timestamp
        else:
            stored["timestamp"] = step.timestamp
    doc["source"] = step.source
    if not agent:
        stored.update({f: getattr(step, f) for f in AGENT_ONLY if getattr(step, f) is not None})
    elif step.model_name is not None:
        doc["model_name"] = step.model_name
    doc["message"] = kept.pop("message", step.message)
    if agent and step.reasoning is not None:
        doc["reasoning_content"] = step.reasoning
    calls = kept.pop("tool_calls") if "tool_calls" in kept else None
    if calls is None:
        calls = canonical_tool_calls(step_id, step.source, step.commands, step.task_complete)
    if calls:
        doc["tool_calls"] = calls
    observation = kept.pop("observation", None)
    if observation is None and step.observation is not None:
        # As the harness sent them: the observation and the messages after it, blank-line joined.
        text = "\n\n".join([step.observation, *(f.message for f in folded or [])])
        observation = canonical_observation(text, calls)
    if folded:
        extra[HARNESS_STEPS] = _harness_entries(folded, (index or step_id) + 1)
    if observation is not None:
        doc["observation"] = observation
    if step.copied_context:
        doc["is_copied_context"] = True
    if agent:
        metrics = {
            "prompt_tokens": step.prompt_tokens,
            "completion_tokens": step.completion_tokens,
            "cost_usd": step.cost_usd,
            "cached_tokens": extra.pop("cached_tokens", None),
        }
        metrics = {k: v for k, v in metrics.items() if v is not None}
        if metrics:
            doc["metrics"] = metrics
    for key, value in kept.items():
        doc.setdefault(key, value)
    if stored:
        extra["rsr_step"] = stored
    if step.harness_control:
        extra["harness_control"] = True
    if step.private_guidance:
        extra["rsr_private_guidance"] = True
    if step.task_complete and step.source != "agent":
        extra["task_complete"] = True
    if extra:
        doc["extra"] = extra
    return doc


def _patch_derived(docs: list[dict[str, Any]], groups: list[tuple[Step, list[Step]]]) -> None:
    """Where reading a step back would not give the stored value of a derived field, carry the value. (Folded
    harness messages read back from their entries as they were stored: only their hosts are compared.)"""
    read_back = iter(parse_steps(docs))
    for doc, (step, folded) in zip(docs, groups, strict=True):
        read = next(read_back)
        for _ in folded:
            next(read_back)
        wrong = {f: getattr(step, f) for f in DERIVED_STEP_FIELDS if getattr(read, f) != getattr(step, f)}
        if wrong:
            if "commands" in wrong:
                wrong["commands"] = [c.model_dump() for c in step.commands]
            doc.setdefault("extra", {}).setdefault("rsr_step", {}).update(wrong)


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
    if t.agent_version is None:
        rsr["agent_version"] = None  # ATIF requires an agent version; the one written below is a stand-in
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
    source_version = extra.pop("schema_version", None)
    kept = dict(extra.pop("_atif", None) or {})
    agent: dict[str, Any] = {"name": t.agent_name if t.agent_name is not None else t.harness}
    agent["version"] = t.agent_version if t.agent_version is not None else "unknown"
    if t.model is not None:
        agent["model_name"] = t.model
    if agent_extra:
        agent["extra"] = agent_extra
    for key, value in (kept.pop("agent", None) or {}).items():
        agent.setdefault(key, value)
    groups = fold_steps(steps)
    step_docs = []
    index = 1  # the index the reader gives each step: its position among the unfolded steps
    for step_id, (step, folded) in enumerate(groups, 1):
        step_docs.append(step_document(step, step_id, folded, index))
        index += 1 + len(folded)
    _patch_derived(step_docs, groups)
    subagents = _handoffs(t.trajectory_id, agent, [s for s, _ in groups], step_docs)
    rsr = provenance(t)
    if transfer is not None:
        rsr["transfer_check"] = transfer.model_dump(mode="json", exclude={"schema_version", "trajectory_id"})
    if reviews:
        rsr["reviews"] = [
            r.model_dump(mode="json", include={"decision", "reviewer", "reason", "created_at"})
            for r in reviews
        ]
    doc: dict[str, Any] = {
        "schema_version": declared_version(source_version),
        "session_id": t.session_id if t.session_id is not None else t.trajectory_id,
        "trajectory_id": t.trajectory_id,
        "agent": agent,
        "steps": step_docs,
    }
    if notes is not None:
        doc["notes"] = notes
    if final_metrics is not None:
        doc["final_metrics"] = final_metrics
    if subagents:
        doc["subagent_trajectories"] = subagents
    for key, value in kept.items():
        doc.setdefault(key, value)
    doc["extra"] = {**extra, "rsr": rsr}
    return doc


_SOURCES = {"system": "system", "user": "user", "assistant": "agent"}


def _handoffs(
    trajectory_id: str, agent: dict[str, Any], steps: list[Step], docs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A hand-off (the conversation outgrew the model's context) as harbor records its Terminus 2's: the
    summarisation is a subagent trajectory embedded in the document (the request that asked for it, then the
    summary), referenced from the step's observation."""
    out: list[dict[str, Any]] = []
    for step, doc in zip(steps, docs, strict=True):
        handoff = step.extra.get(HANDOFF)
        if not isinstance(handoff, dict) or not isinstance(handoff.get("request"), list):
            continue
        sub_id = f"{trajectory_id}.handoff-{len(out) + 1}"
        sub_steps: list[dict[str, Any]] = [
            {
                "step_id": i,
                "source": _SOURCES.get(str(m.get("role")), "user"),
                "message": str(m.get("content")),
            }
            for i, m in enumerate(handoff["request"], 1)
            if isinstance(m, dict)
        ]
        answer: dict[str, Any] = {"step_id": len(sub_steps) + 1, "source": "agent", "message": step.message}
        if step.reasoning is not None:
            answer["reasoning_content"] = step.reasoning
        out.append(
            {
                "schema_version": ATIF_VERSION,
                "trajectory_id": sub_id,
                "agent": {**agent, "name": f"{agent['name']}-summarizer"},
                "steps": [*sub_steps, answer],
            }
        )
        doc["observation"] = {"results": [{"subagent_trajectory_ref": [{"trajectory_id": sub_id}]}]}
    return out


# Names an id must not take as it is: the export's card beside the task directories, the directory of runs with
# no task, and the names Windows keeps for devices (compared case-insensitively: case-insensitive file systems).
RESERVED_NAMES = frozenset({"readme.md", "_no_task", "con", "prn", "aux", "nul", "com1", "lpt1"})


def safe_name(name: str, limit: int = 120) -> str:
    """The file name of an id: the id itself when it is a plain name (letters, digits, `.`, `_`, `-`, not
    starting or ending with `.` or `_`, at most `limit` characters, not reserved); otherwise its safe
    characters, `~` and a digest of the whole id. A kept name has no `~`, so no id can take another's altered
    name, and distinct altered ids differ in their digest."""
    safe = _UNSAFE.sub("_", name).strip("._") or "_"
    if safe == name and len(name) <= limit and name.lower() not in RESERVED_NAMES:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{safe[:limit]}~{digest}"


def relative_path(trajectory: Trajectory) -> str:
    """Where a trajectory's file goes inside the export directory: <task>/<trajectory>.atif.json."""
    task = safe_name(trajectory.task_id) if trajectory.task_id else "_no_task"
    return f"{task}/{safe_name(trajectory.trajectory_id)}.atif.json"
