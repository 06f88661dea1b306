"""Coverage and funnel frames for charts, built on the one implementation of each figure.

Per-harness figures come from `rsr stats coverage` (rsr_core/store/queries.py coverage) and the funnel,
expansion ratio included, from `rsr stats funnel` (rsr_core/store/pipeline.py funnel); this module only
reshapes them and adds the overlap of solved-task sets (UpSet intersections), which partitions the union.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

HARNESS_COLUMNS = ("harness", "attempted_tasks", "solved_tasks", "unique_solved")
# The funnel's stages the chart draws, in pipeline order, with the group each belongs to: the main line, or
# where runbooks and executions leave it (the runbook statuses sum to `runbooks`). Not drawn: the funnel's
# `answer_transfer_replay` (a part of `answer_transfer`) and `expansion_ratio`.
FUNNEL_STAGES = (
    ("sources", "source trajectories", "pipeline"),
    ("runbooks", "runbooks (all critic rounds)", "pipeline"),
    ("critic_pending", "waiting for the critic", "runbook status"),
    ("critic_rejected", "rejected by the critic", "runbook status"),
    ("pending_review", "waiting for human review", "runbook status"),
    ("human_rejected", "rejected by a reviewer", "runbook status"),
    ("approved", "approved", "runbook status"),
    ("executions", "executions", "pipeline"),
    ("verifier_tampered", "tampered with the verifier", "execution outcome"),
    ("verifier_inconsistent", "reward contradicted by the tests' record", "execution outcome"),
    ("verified", "passed the verifier", "pipeline"),
    ("answer_transfer", "answer transfer", "execution outcome"),
    ("kept", "kept for training", "pipeline"),
)


def harness_frame(coverage: dict[str, Any]) -> pd.DataFrame:
    """`rsr stats coverage` payload -> one row per harness: HARNESS_COLUMNS."""
    rows = [{"harness": name, **figures} for name, figures in coverage["harnesses"].items()]
    return pd.DataFrame(rows, columns=list(HARNESS_COLUMNS))


def solved_sets(outcomes: pd.DataFrame) -> dict[str, set[str]]:
    """Tasks solved per harness from a discovery outcomes frame (harness, task_id, solved)."""
    out: dict[str, set[str]] = {h: set() for h in sorted(outcomes["harness"].unique())}
    solved = outcomes[outcomes["solved"].astype(bool)]
    for harness, grp in solved.groupby("harness"):
        out[str(harness)] = set(grp["task_id"])
    return out


def upset_frame(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Exclusive intersections of the solved sets: one row per combination of harnesses that solve a task.

    Columns: one boolean column per harness (member of the combination), `harnesses` ("a + b"), `degree`
    (how many harnesses) and `tasks` (tasks solved by exactly those harnesses). Sorted by size, largest
    first. The sizes sum to the union; a one-harness row is that harness's unique_solved.
    """
    sets = solved_sets(outcomes)
    names = list(sets)
    solved = sorted(set().union(*sets.values()))
    membership = pd.DataFrame(
        {name: [t in sets[name] for t in solved] for name in names}, index=solved, columns=names
    )
    if membership.empty:
        return pd.DataFrame(columns=[*names, "harnesses", "degree", "tasks"])
    combos = membership.value_counts(sort=False).rename("tasks").reset_index()
    combos["harnesses"] = combos[names].apply(lambda r: " + ".join(n for n in names if r[n]), axis=1)
    combos["degree"] = combos[names].sum(axis=1).astype(int)
    return combos.sort_values(["tasks", "degree", "harnesses"], ascending=[False, True, True]).reset_index(
        drop=True
    )


def funnel_frame(funnel: dict[str, Any]) -> pd.DataFrame:
    """`rsr stats funnel` payload -> stage, label, group, count rows in pipeline order (for the funnel chart)."""
    rows = [
        {"stage": key, "label": label, "group": group, "count": int(funnel.get(key) or 0)}
        for key, label, group in FUNNEL_STAGES
    ]
    return pd.DataFrame(rows, columns=["stage", "label", "group", "count"])


def expansion_ratio(funnel: dict[str, Any]) -> float:
    """Kept rewrite trajectories / distinct source trajectories that produced them (from the funnel)."""
    return float(funnel["expansion_ratio"])
