"""The answer-transfer filter: did a rewrite use a value it could not have derived itself?

Deterministic: a value literal in the rewrite's commands that appears in the runbook, the source run or the
solution, but neither in the instruction nor in any earlier observation of the same run. Plus a model check.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from rsr_core import prompts
from rsr_core.models import Runbook, Task, Trajectory, TransferVerdict
from rsr_core.protocols import LLM
from rsr_core.rewrite.compress import condense
from rsr_core.rewrite.literals import value_literals
from rsr_core.rewrite.llm_json import ModelOutputError, ask_json


def _source_text(source: Trajectory) -> str:
    parts = []
    for s in source.steps:
        parts += [c.keystrokes for c in s.commands]
        parts.append(s.observation or "")
    return "\n".join(parts)


def deterministic_transfer(
    rewrite: Trajectory, runbook: Runbook, source: Trajectory, task: Task
) -> list[str]:
    """Evidence lines, one per transferred value (empty when none)."""
    known_elsewhere = "\n".join(
        [runbook.text(), _source_text(source), *(f.content for f in task.files if f.role == "solution")]
    )
    # Case is ignored for what the run saw: a value it upper-cased (PORT from "port") was still derived.
    seen = ((task.instruction or "") + "\n" + (rewrite.instruction or "")).lower()
    evidence: list[str] = []
    for step in rewrite.steps:
        if step.private_guidance:
            continue
        if step.source != "agent":
            seen += "\n" + step.message.lower()  # the prompt shows the initial terminal state
            continue
        for cmd in step.commands:
            for value in value_literals(cmd.keystrokes):
                if value.lower() not in seen and _has_word(known_elsewhere, value):
                    where = (
                        "the runbook"
                        if _has_word(runbook.text(), value)
                        else "the source run or the solution"
                    )
                    evidence.append(
                        f"step {step.index}: {value!r} is used before the run saw it; it is in {where}"
                    )
        seen += "\n" + (step.observation or "").lower()
    return evidence


def _has_word(text: str, token: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])", text) is not None


class TransferAnswer(BaseModel):
    """The model's answer."""

    model_config = ConfigDict(extra="ignore")
    answer_transfer: bool
    evidence: list[str] = Field(default_factory=list)


def transfer_messages(task: Task, runbook: Runbook, rewrite: Trajectory) -> list[dict[str, str]]:
    """The model check's request."""
    user = prompts.render(
        prompts.load("transfer_user_v1.md"),
        instruction=task.instruction or "",
        runbook=runbook.text(),
        record=condense(rewrite),
    )
    return [{"role": "system", "content": prompts.load("transfer_v1.md")}, {"role": "user", "content": user}]


def check_transfer(
    llm: LLM | None, model: str | None, rewrite: Trajectory, runbook: Runbook, source: Trajectory, task: Task
) -> TransferVerdict:
    """Both checks; transfer if either finds it. Without a model only the deterministic check runs; a model
    that gives no valid verdict after the retries leaves the verdict to the deterministic check (and says so)."""
    det = deterministic_transfer(rewrite, runbook, source, task)
    llm_verdict, llm_evidence = None, []
    if llm is not None and model:
        try:
            answer, _ = ask_json(llm, model, transfer_messages(task, runbook, rewrite), TransferAnswer)
            llm_verdict, llm_evidence = answer.answer_transfer, answer.evidence
        except ModelOutputError as exc:
            llm_evidence = [f"model check gave no verdict: {exc}"]
    return TransferVerdict(
        trajectory_id=rewrite.trajectory_id,
        answer_transfer=bool(det) or bool(llm_verdict),
        deterministic_evidence=det,
        llm_verdict=llm_verdict,
        llm_evidence=llm_evidence,
    )
