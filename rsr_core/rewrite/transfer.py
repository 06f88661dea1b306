"""The answer-transfer filter of the Critic: the reader's two stages (rsr_core/transfer/) and a model check beside
them; any one flagging a rewrite makes it transfer."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rsr_core import prompts
from rsr_core.models import Runbook, Task, Trajectory, TransferVerdict
from rsr_core.protocols import LLM
from rsr_core.rewrite.compress import condense
from rsr_core.rewrite.llm_json import ModelOutputError, ask_json
from rsr_core.transfer.reading import read_statically, replay_evidence
from rsr_core.transfer.replay import Replayer


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
    return [{"role": "system", "content": prompts.load("transfer_v2.md")}, {"role": "user", "content": user}]


def check_transfer(
    llm: LLM | None,
    model: str | None,
    rewrite: Trajectory,
    runbook: Runbook,
    source: Trajectory,
    task: Task,
    min_literal_len: int = 4,
    replayer: Replayer | None = None,
) -> TransferVerdict:
    """Both checks; transfer if either finds it, so a model saying "no transfer" never clears a rewrite the
    deterministic check flagged. Without a model only the deterministic check runs; a model that gives no valid
    verdict after the retries leaves the verdict to the deterministic check (and says so). The deterministic
    check is the static stage, then — with a replayer, when it found nothing and the run showed a hidden value
    or changed files — the replay stage."""
    reading = read_statically(rewrite, runbook, source, task, min_literal_len)
    det = reading.evidence
    if not det and replayer is not None and (reading.shown or rewrite.changed_paths):
        det = replay_evidence(reading, replayer.replay(rewrite), min_literal_len)
    llm_verdict, llm_evidence = None, []
    if llm is not None and model:
        try:
            answer, _ = ask_json(llm, model, transfer_messages(task, runbook, rewrite), TransferAnswer)
            llm_verdict, llm_evidence = answer.answer_transfer, answer.evidence
        except ModelOutputError as exc:
            llm_evidence = [f"model check gave no verdict: {exc}"]
    return TransferVerdict(
        trajectory_id=rewrite.trajectory_id,
        answer_transfer=bool(det) or llm_verdict is True,
        deterministic_evidence=det,
        llm_verdict=llm_verdict,
        llm_evidence=llm_evidence,
    )
