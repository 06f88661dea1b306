"""Small corpora built through the real store (no mocks)."""

from __future__ import annotations

from rsr_core.models import Command, Step, Trajectory


def run(
    tid: str,
    task: str | None,
    keystrokes: list[str],
    *,
    kind: str = "rewrite",
    runbook: str | None = None,
    reward: float | None = 1.0,
    model: str | None = "model-a",
    harness: str = "terminus-2",
) -> Trajectory:
    """A trajectory whose agent steps send these keystroke batches, one batch per step."""
    steps = [Step(index=1, source="user", message="solve the task")]
    steps += [
        Step(index=i, source="agent", message="Analysis: x\nPlan: y", commands=[Command(keystrokes=keys)])
        for i, keys in enumerate(keystrokes, start=2)
    ]
    return Trajectory(
        trajectory_id=tid,
        task_id=task,
        kind=kind,
        runbook_id=runbook,
        source_trajectory_id="src-" + (runbook or "none") if kind == "rewrite" else None,
        reward=reward,
        model=model,
        harness=harness,
        content_hash=tid,
        steps=steps,
    )
