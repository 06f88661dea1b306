"""The Executor: re-solve the task under Terminus 2 in a fresh sandbox with the runbook as private guidance."""

from __future__ import annotations

from rsr_core import prompts
from rsr_core.harness.terminus2 import RunResult, Terminus2Harness
from rsr_core.models import Runbook, Task
from rsr_core.protocols import LLM, SandboxProvider

GUIDANCE_PROMPT = "executor_guidance_v1.md"


def guidance_text(rb: Runbook) -> str:
    """The private-guidance message (a step marked `private_guidance`, which export always removes)."""
    return prompts.render(prompts.load(GUIDANCE_PROMPT), runbook=rb.text())


def execute_runbook(
    llm: LLM,
    sandboxes: SandboxProvider,
    model: str,
    task: Task,
    rb: Runbook,
    run_index: int,
    *,
    job_id: str | None = None,
    max_turns: int = 30,
    temperature: float = 0.7,
) -> RunResult:
    """One execution; the trajectory is of kind `rewrite` with its source and runbook as provenance. The run
    index is the request seed, so M executions differ on endpoints that honour seeds."""
    harness = Terminus2Harness(
        llm, sandboxes, model, max_turns=max_turns, temperature=temperature, seed=run_index
    )
    labels = {"rsr.job": job_id} if job_id else None
    return harness.run(
        task,
        guidance=guidance_text(rb),
        kind="rewrite",
        labels=labels,
        source_trajectory_id=rb.source_trajectory_id,
        runbook_id=rb.runbook_id,
        job_id=job_id,
    )
