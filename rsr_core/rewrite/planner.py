"""The Planner: a successful source trajectory -> a runbook (five parts, schema-validated JSON)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rsr_core import prompts
from rsr_core.models import Runbook, Task, Trajectory
from rsr_core.protocols import LLM
from rsr_core.rewrite.compress import condense
from rsr_core.rewrite.llm_json import ask_json

PLANNER_PROMPT = "planner_v1.md"
PLANNER_USER = "planner_user_v1.md"
PROMPT_VERSION = prompts.version_of(PLANNER_PROMPT)


class RunbookDraft(BaseModel):
    """What the Planner must return."""

    model_config = ConfigDict(extra="ignore")
    target_end_state: str = Field(min_length=1)
    key_milestones: list[str] = Field(min_length=1)
    useful_checks: list[str] = Field(min_length=1)
    recovery_strategies: list[str] = Field(min_length=1)
    pitfalls: list[str] = Field(min_length=1)


def planner_messages(
    task: Task, source: Trajectory, variant: int, variants: int, critique: str | None = None
) -> list[dict[str, str]]:
    """The Planner's conversation: instructions, then instruction + condensed record (+ the critique)."""
    critique_text = ""
    if critique:
        critique_text = (
            "\nYour previous runbook for this run was rejected by the reviewer:\n"
            f"{critique}\nWrite a new runbook that fixes every point.\n"
        )
    user = prompts.render(
        prompts.load(PLANNER_USER),
        instruction=task.instruction or source.instruction or "",
        record=condense(source),
        critique=critique_text,
        variant=variant + 1,
        variants=variants,
    )
    return [{"role": "system", "content": prompts.load(PLANNER_PROMPT)}, {"role": "user", "content": user}]


def plan_runbook(
    llm: LLM,
    model: str,
    task: Task,
    source: Trajectory,
    *,
    runbook_id: str,
    lineage_id: str,
    variant: int,
    variants: int,
    round_: int = 1,
    parent_runbook_id: str | None = None,
    critique: str | None = None,
    temperature: float = 0.7,
    job_id: str | None = None,
) -> Runbook:
    """One runbook round. The variant index is sent as the request seed, so K runbooks differ even from
    endpoints that honour seeds deterministically."""
    messages = planner_messages(task, source, variant, variants, critique)
    draft, _ = ask_json(llm, model, messages, RunbookDraft, temperature=temperature, seed=variant)
    return Runbook(
        runbook_id=runbook_id,
        lineage_id=lineage_id,
        source_trajectory_id=source.trajectory_id,
        task_id=task.task_id,
        job_id=job_id,
        variant=variant,
        round=round_,
        parent_runbook_id=parent_runbook_id,
        prompt_version=PROMPT_VERSION,
        model=model,
        **draft.model_dump(),
    )
