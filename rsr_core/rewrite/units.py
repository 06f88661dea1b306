"""Work units of a rewrite job. Each takes serialisable inputs and returns a serialisable result; none touches
the store, so units may run in threads, processes or on other machines while one process writes."""

from __future__ import annotations

import hashlib
import socket
from typing import Any, Literal

from pydantic import BaseModel, Field

from rsr_core.llm.meter import MeteredLLM
from rsr_core.models import Runbook, Task, Trajectory
from rsr_core.protocols import LLM, SandboxProvider
from rsr_core.rewrite.critic import CriticSettings, deterministic_flags, llm_flags
from rsr_core.rewrite.executor import execute_runbook
from rsr_core.rewrite.planner import plan_runbook
from rsr_core.rewrite.transfer import check_transfer
from rsr_core.settings import Settings
from rsr_core.transfer.replay import replayer_for


class RewriteParams(BaseModel):
    """What `rsr rewrite` was asked to do (stored with the job, so `rsr jobs resume` needs nothing else)."""

    tasks: list[str] = Field(default_factory=list)
    """Task ids whose successful discovery runs are sources (empty with no sources: all successes)."""
    sources: list[str] = Field(default_factory=list)
    """Explicit source trajectory ids."""
    k: int = Field(4, ge=1)
    """Runbooks per source."""
    m: int = Field(4, ge=1)
    """Executions per approved runbook."""
    rounds: int = Field(3, ge=1)
    """Critic rounds per runbook (1 = no replanning)."""
    gate: Literal["critic", "human"] = "critic"
    """Whether critic-approved runbooks run at once or wait for a human review."""
    planner_model: str
    """Planner model name."""
    critic_model: str
    """Critic model name (it also judges answer transfer)."""
    executor_model: str
    """Executor model name."""
    temperature: float = 0.7
    """Sampling temperature of the Planner and the Executor."""
    executor_max_turns: int = 30
    """Model calls per execution."""
    fuzzy_threshold: float = 88.0
    """Critic fuzzy-match threshold (0-100)."""
    min_literal_len: int = 4
    """Shortest hidden literal the critic looks for."""

    @classmethod
    def from_settings(cls, settings: Settings, **fields: Any) -> RewriteParams:
        """Parameters where the settings fill what `fields` leaves out: role models and critic thresholds."""
        for role in ("planner", "critic", "executor"):
            fields[f"{role}_model"] = fields.get(f"{role}_model") or settings.role_model(role)
        fields.setdefault("fuzzy_threshold", settings.critic_fuzzy_threshold)
        fields.setdefault("min_literal_len", settings.critic_min_literal_len)
        return cls(**fields)


def stable_id(prefix: str, *parts: str, n: int = 12) -> str:
    """A short deterministic id: re-running a unit after a crash yields the same ids."""
    return f"{prefix}-{hashlib.sha256('|'.join(parts).encode()).hexdigest()[:n]}"


def run_unit(kind: str, inputs: dict[str, Any], llm: LLM, sandboxes: SandboxProvider) -> dict[str, Any]:
    """Do one unit of work; the result carries what it asked of the model (`usage`) and where it ran."""
    meter = MeteredLLM(llm)
    result = _run_unit(kind, inputs, meter, sandboxes)
    result["usage"] = meter.usage()
    result["worker"] = socket.gethostname()
    return result


def _run_unit(kind: str, inputs: dict[str, Any], llm: LLM, sandboxes: SandboxProvider) -> dict[str, Any]:
    params = RewriteParams(**inputs["params"])
    task = Task(**inputs["task"])
    if kind == "plan":
        source = Trajectory(**inputs["source"])
        rb = plan_runbook(
            llm,
            params.planner_model,
            task,
            source,
            runbook_id=inputs["runbook_id"],
            lineage_id=inputs["lineage_id"],
            variant=inputs["variant"],
            variants=params.k,
            round_=inputs["round"],
            parent_runbook_id=inputs.get("parent_runbook_id"),
            critique=inputs.get("critique"),
            temperature=params.temperature,
            job_id=inputs["job_id"],
        )
        return {"runbook": rb.model_dump(mode="json")}
    if kind == "critic":
        rb = Runbook(**inputs["runbook"])
        source = Trajectory(**inputs["source"])
        cfg = CriticSettings(params.fuzzy_threshold, params.min_literal_len)
        flags = deterministic_flags(rb, task, source, cfg)
        verdict, model_flags = llm_flags(llm, params.critic_model, task.instruction or "", rb)
        flags += model_flags
        if any(f.severity == "high" and f.stage == "deterministic" for f in flags):
            verdict = "reject"
        return {"verdict": verdict, "flags": [f.model_dump(mode="json") for f in flags]}
    if kind == "execute":
        rb = Runbook(**inputs["runbook"])
        result = execute_runbook(
            llm,
            sandboxes,
            params.executor_model,
            task,
            rb,
            inputs["run_index"],
            job_id=inputs["job_id"],
            max_turns=params.executor_max_turns,
            temperature=params.temperature,
        )
        return {"trajectory": result.trajectory.model_dump(mode="json"), "turns": result.turns}
    if kind == "filter":
        transfer = check_transfer(
            llm,
            params.critic_model,
            Trajectory(**inputs["rewrite"]),
            Runbook(**inputs["runbook"]),
            Trajectory(**inputs["source"]),
            task,
            min_literal_len=params.min_literal_len,
            replayer=replayer_for(sandboxes),
        )
        return {"transfer": transfer.model_dump(mode="json")}
    raise ValueError(f"unknown unit kind {kind!r}")
