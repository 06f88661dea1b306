"""Condensing a trajectory into text a model can read: harness-control steps dropped, observations cut."""

from __future__ import annotations

from rsr_core.models import Trajectory


def cut_middle(text: str, limit: int) -> str:
    """Keep the head and tail of a long text."""
    if len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def condense(traj: Trajectory, observation_budget: int = 1200, total_budget: int = 16000) -> str:
    """The agent's turns (analysis, plan, keystrokes) with cut observations; harness-injected and private
    guidance steps are left out, so no harness scaffolding reaches the reader."""
    turns: list[str] = []
    for step in traj.steps:
        if step.source != "agent" or step.harness_control or step.private_guidance:
            continue
        lines = [f"Turn {len(turns) + 1}:"]
        if step.analysis is not None:
            lines += [f"  analysis: {step.analysis}", f"  plan: {step.plan or ''}"]
        elif step.message:
            lines.append(f"  answer: {cut_middle(step.message, 400)}")
        lines += [f"  $ {c.keystrokes.rstrip()}" for c in step.commands]
        if step.task_complete:
            lines.append("  (claims the task is complete)")
        if step.observation:
            lines.append("  output:\n" + cut_middle(step.observation, observation_budget))
        turns.append("\n".join(lines))
    text = "\n\n".join(turns)
    if len(text) > total_budget and observation_budget > 200:
        return condense(traj, observation_budget // 2, total_budget)
    return cut_middle(text, total_budget)
