"""Trajectories and pipeline rows for the export tests, written through the real store and pipeline helpers."""

from __future__ import annotations

from rsr_core.models import Command, Review, Runbook, Step, Task, Trajectory, TransferVerdict
from rsr_core.store import Store
from rsr_core.store.pipeline import insert_review, insert_runbook, insert_transfer

SYSTEM_PROMPT = "You are an AI assistant tasked with solving command-line tasks in a Linux environment."
CONFIRM = "Are you sure you want to mark the task as complete? This will trigger grading."


def runbook(runbook_id: str, source: str, task: str) -> Runbook:
    """A runbook whose every sentence is unique to it (so a leak into messages is detectable)."""
    tag = runbook_id.replace("-", " ")
    return Runbook(
        runbook_id=runbook_id,
        lineage_id=runbook_id,
        source_trajectory_id=source,
        task_id=task,
        target_end_state=f"The report for {tag} lists every region with its quarterly total.",
        key_milestones=[
            f"Milestone of {tag}: inspect the sales ledger first.",
            f"Milestone of {tag}: aggregate.",
        ],
        useful_checks=[f"Check for {tag}: count the lines of the report with wc."],
        recovery_strategies=[f"Recovery for {tag}: rerun the aggregation after fixing the delimiter."],
        pitfalls=[f"Pitfall of {tag}: the ledger has a header row that must be skipped."],
        prompt_version="planner-v1",
        critic_verdict="pass",
    )


def trajectory(
    tid: str,
    task: str = "sales-report",
    kind: str = "rewrite",
    harness: str = "terminus-2",
    reward: float | None = 1.0,
    runbook_text: str | None = None,
    runbook_id: str | None = None,
    source: str | None = None,
    variant: str = "",
) -> Trajectory:
    """A Terminus 2 run as the harness records it: optional private guidance, prompt, agent turns with
    observations, a completion claim, the "are you sure?" confirmation (harness control) and the re-claim."""
    steps = [Step(index=1, source="system", message=SYSTEM_PROMPT)]
    if runbook_text is not None:
        steps.append(Step(index=2, source="system", message=runbook_text, private_guidance=True))
    prompt = f"Task: build the sales report.\n\nCurrent terminal state:\nroot@box:/app# {variant}"
    steps += [
        Step(source="user", index=0, message=prompt),
        Step(
            index=0,
            source="agent",
            message="Analysis: Nothing seen yet.\nPlan: Look at the ledger.",
            analysis="Nothing seen yet.",
            plan="Look at the ledger.",
            commands=[Command(keystrokes="ls -la\n", duration=0.1), Command(keystrokes="head ledger.csv\n")],
            observation="ledger.csv\nregion,q,total\n",
        ),
        Step(
            index=0,
            source="agent",
            message="Analysis: Ledger found.\nPlan: Aggregate.",
            analysis="Ledger found.",
            plan="Aggregate.",
            commands=[Command(keystrokes="python3 agg.py > report.txt\n", duration=2.0)],
            observation="root@box:/app# ",
            task_complete=True,
        ),
        Step(index=0, source="user", message=CONFIRM, harness_control=True),
        Step(
            index=0,
            source="agent",
            message="Analysis: Done.\nPlan: Confirm.",
            analysis="Done.",
            plan="Confirm.",
            task_complete=True,
        ),
    ]
    for i, step in enumerate(steps, 1):
        step.index = i
    return Trajectory(
        trajectory_id=tid,
        session_id=tid,
        task_id=task,
        kind=kind,
        harness=harness,
        agent_name=harness,
        model="model-x",
        reward=reward,
        runbook_id=runbook_id,
        source_trajectory_id=source,
        content_hash=tid,
        steps=steps,
    )


def add_task(store: Store, task_id: str, category: str) -> None:
    """A task with a category (for the dataset card's counts)."""
    store.write_task(Task(task_id=task_id, category=category, instruction="build it"), task_id)


def add_rewrite(
    store: Store,
    tid: str,
    reward: float | None,
    transfer: bool | None,
    reviews: list[str],
    runbook_id: str | None = None,
    task: str = "sales-report",
    variant: str = "",
) -> Runbook:
    """A rewrite from its own runbook (or a shared one), with a transfer check and reviews in order."""
    rid = runbook_id or f"rb-{tid}"
    rb = runbook(rid, "disc-src", task)
    with store.transaction() as cur:
        if cur.execute("SELECT count(*) FROM runbooks WHERE runbook_id = ?", [rid]).fetchone()[0] == 0:
            insert_runbook(cur, rb)
    traj = trajectory(tid, task, "rewrite", reward=reward, runbook_text=rb.text(), runbook_id=rid,
                      source="disc-src", variant=variant)  # fmt: skip
    store.write_trajectories([traj])
    with store.transaction() as cur:
        if transfer is not None:
            insert_transfer(cur, TransferVerdict(trajectory_id=tid, answer_transfer=transfer))
        for decision in reviews:
            insert_review(cur, Review(runbook_id=rid, decision=decision, reviewer="ana", reason="looked"))
    return rb
