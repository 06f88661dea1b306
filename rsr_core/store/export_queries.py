"""Store access for export: which trajectories train (and why the others do not), whole trajectories read in
batches in a stable order, and the pipeline verdicts that travel with an archive (`rsr export --all`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import duckdb
import pyarrow as pa

from rsr_core.models import Review, Trajectory, TransferVerdict
from rsr_core.store.columns import (
    ACTION_READ_COLUMNS,
    STEP_READ_COLUMNS,
    TRAJECTORY_READ_COLUMNS,
    trajectory_from_rows,
)
from rsr_core.store.sql import registered, rows_as_dicts
from rsr_core.vocabulary import GENERAL_HARNESS, LEFT_OUT

# The evidence lines of the replay stage of the answer-transfer check begin with this (REPLAY_MARK of
# rsr_core/transfer/stages.py, a layer above the store; a test checks they agree).
REPLAY_EVIDENCE_PREFIX = "replay: "
_REPLAYED = (
    "coalesce(len(list_filter(tc.deterministic_evidence, "
    f"lambda e: starts_with(e, '{REPLAY_EVIDENCE_PREFIX}'))) > 0, FALSE)"
)
_GENERAL = f"'{GENERAL_HARNESS}'"

# The SQL test of every left-out reason found in the selection, keyed by name; they are tested in the order of
# LEFT_OUT (the first that applies counts), the rest are found while the training rows are built
# (rsr_core/formats/training.py). Rewrites train iff the `rewrite_status` view keeps them; discovery runs iff
# terminus-2 solved the task (rsr_solved: reward >= 1 without tampering); evals never. Other discovery
# harnesses (StateM, RSRT, …) carry scaffolding the model will not have at inference. Scripted runs (replayed
# answers) only on request. An answer transfer the replay stage found is told apart from the others.
CONDITIONS: dict[str, str] = {
    "direct_terminus": f"NOT $include_direct AND t.kind = 'discovery' AND t.harness = {_GENERAL}",
    "eval": "t.kind = 'eval'",
    "harness": f"t.kind = 'discovery' AND t.harness <> {_GENERAL}",
    "scripted": "t.scripted AND NOT $include_scripted",
    "verifier_tampered": "coalesce(t.verifier_tampered, FALSE)",
    "not_verified": "NOT rsr_solved(t.reward, t.verifier_tampered)",
    "answer_transfer": f"t.kind = 'rewrite' AND s.answer_transfer AND NOT {_REPLAYED}",
    "answer_transfer_replay": f"t.kind = 'rewrite' AND s.answer_transfer AND {_REPLAYED}",
    "human_rejected": "t.kind = 'rewrite' AND s.human_rejected",
}
ALL_EXPORTS = frozenset({"direct_terminus"})
"""Reasons that hold with the training filters off (`rsr export --all`); they come first in LEFT_OUT."""


def _left_out_case() -> str:
    """The CASE naming a selected trajectory's left-out reason (NULL: none SQL can see). With the training filters
    off (`$training` false) it stops after the reasons of ALL_EXPORTS."""
    in_sql = [
        r.name for r in LEFT_OUT if r.in_sql and r.name in CONDITIONS
    ]  # tests/test_vocabulary.py: all are
    whens = [f"WHEN {CONDITIONS[name]} THEN '{name}'" for name in in_sql]
    whens.insert(sum(name in ALL_EXPORTS for name in in_sql), "WHEN NOT $training THEN NULL")
    return "CASE\n            " + "\n            ".join(whens) + "\n        END"


SELECTED_SQL = f"""
WITH selected AS (
    SELECT t.trajectory_id, t.task_id, t.kind, t.harness, t.n_steps, t.rowid AS row_order, t.training_rule,
        t.training_key, t.training_why, t.agent_steps,
        {_left_out_case()} AS left_out
    FROM trajectories t LEFT JOIN rewrite_status s USING (trajectory_id)
    LEFT JOIN transfer_checks tc USING (trajectory_id)
    WHERE list_contains($kinds, t.kind) AND (len($tasks) = 0 OR list_contains($tasks, t.task_id))
)
"""


def selection_params(
    kinds: Iterable[str],
    task_ids: Iterable[str],
    include_direct_terminus: bool,
    training: bool,
    include_scripted: bool = False,
) -> dict[str, Any]:
    return {
        "kinds": list(kinds),
        "tasks": list(task_ids),
        "include_direct": include_direct_terminus,
        "training": training,
        "include_scripted": include_scripted,
    }


def selection_counts(
    cur: duckdb.DuckDBPyConnection,
    kinds: Iterable[str],
    task_ids: Iterable[str] = (),
    include_direct_terminus: bool = True,
    training: bool = True,
    include_scripted: bool = False,
) -> list[tuple[str | None, str, str, int]]:
    """(left_out reason or None for exported, kind, harness, count) over the selected trajectories."""
    params = selection_params(kinds, task_ids, include_direct_terminus, training, include_scripted)
    sql = SELECTED_SQL + "SELECT left_out, kind, harness, count(*) FROM selected GROUP BY ALL ORDER BY ALL"
    return [(r[0], r[1], r[2], int(r[3])) for r in cur.execute(sql, params).fetchall()]


def training_rows(
    cur: duckdb.DuckDBPyConnection,
    kinds: Iterable[str],
    task_ids: Iterable[str] = (),
    include_direct_terminus: bool = True,
    training: bool = True,
    include_scripted: bool = False,
) -> pa.Table:
    """The selected trajectories that are not left out, in export order, with what the store keeps of their
    training row: trajectory_id, task_id, kind, harness, training_rule, training_key, training_why,
    agent_steps."""
    params = selection_params(kinds, task_ids, include_direct_terminus, training, include_scripted)
    sql = SELECTED_SQL + (
        "SELECT trajectory_id, task_id, kind, harness, training_rule, training_key, training_why, agent_steps "
        "FROM selected WHERE left_out IS NULL ORDER BY row_order"
    )
    return cur.sql(sql, params=params).to_arrow_table()


def read_trajectories(cur: duckdb.DuckDBPyConnection, ids: pa.Array | list[str]) -> list[Trajectory]:
    """Whole trajectories (steps and commands) for these ids, in the order given; unknown ids are skipped."""
    table = pa.table({"trajectory_id": pa.array(ids, pa.string())})
    table = table.append_column("ord", pa.array(range(table.num_rows), pa.int64()))
    traj_cols = ", ".join("t." + f for f in TRAJECTORY_READ_COLUMNS)
    step_cols = ", ".join("s." + f for f in STEP_READ_COLUMNS)
    action_cols = ", ".join("a." + f for f in ACTION_READ_COLUMNS)
    with registered(cur, "_export_ids", table) as name:
        join = f"JOIN {name} b USING (trajectory_id)"
        metas = rows_as_dicts(cur.execute(f"SELECT {traj_cols} FROM trajectories t {join} ORDER BY b.ord"))
        steps = rows_as_dicts(
            cur.execute(
                f"SELECT s.trajectory_id, {step_cols} FROM steps s {join} ORDER BY b.ord, s.step_index"
            )
        )
        actions = rows_as_dicts(
            cur.execute(
                f"SELECT a.trajectory_id, {action_cols} FROM actions a {join} "
                "ORDER BY b.ord, a.step_index, a.action_index"
            )
        )
    steps_of: dict[str, list[dict[str, Any]]] = {}
    for s in steps:
        steps_of.setdefault(s["trajectory_id"], []).append(s)
    actions_of: dict[str, list[dict[str, Any]]] = {}
    for a in actions:
        actions_of.setdefault(a["trajectory_id"], []).append(a)
    return [
        trajectory_from_rows(
            meta, steps_of.get(meta["trajectory_id"], []), actions_of.get(meta["trajectory_id"], [])
        )
        for meta in metas
    ]


def task_instructions(cur: duckdb.DuckDBPyConnection, task_ids: Iterable[str]) -> dict[str, str]:
    """The instruction of each of these tasks that has one."""
    table = pa.table({"task_id": pa.array(sorted(set(task_ids)), pa.string())})
    with registered(cur, "_export_instr", table) as name:
        rows = cur.execute(
            f"SELECT task_id, instruction FROM tasks JOIN {name} USING (task_id) WHERE instruction IS NOT NULL"
        ).fetchall()
    return dict(rows)


def task_categories(cur: duckdb.DuckDBPyConnection, task_ids: Iterable[str]) -> dict[str, str | None]:
    """Category of each of these tasks (None when the task has no metadata)."""
    table = pa.table({"task_id": pa.array(sorted(set(task_ids)), pa.string())})
    with registered(cur, "_export_tasks", table) as name:
        rows = cur.execute(f"SELECT task_id, category FROM tasks JOIN {name} USING (task_id)").fetchall()
    return dict(rows)


# -- pipeline verdicts carried in an archive --------------------------------------------------------------


def carried_verdicts(
    cur: duckdb.DuckDBPyConnection, trajectories: list[Trajectory]
) -> tuple[dict[str, TransferVerdict], dict[str, list[Review]]]:
    """Transfer verdicts by trajectory id and review histories (oldest first) by runbook id."""
    ids = pa.table({"trajectory_id": pa.array([t.trajectory_id for t in trajectories], pa.string())})
    runbooks = sorted({t.runbook_id for t in trajectories if t.runbook_id})
    with registered(cur, "_export_carry", ids) as name:
        rows = cur.execute(
            "SELECT trajectory_id, answer_transfer, deterministic_evidence, llm_verdict, llm_evidence "
            f"FROM transfer_checks JOIN {name} USING (trajectory_id)"
        ).fetchall()
    transfers = {
        r[0]: TransferVerdict(
            trajectory_id=r[0],
            answer_transfer=r[1],
            deterministic_evidence=list(r[2] or []),
            llm_verdict=r[3],
            llm_evidence=list(r[4] or []),
        )
        for r in rows
    }
    reviews: dict[str, list[Review]] = {}
    if runbooks:
        for rid, decision, reviewer, reason, created in cur.execute(
            "SELECT runbook_id, decision, reviewer, reason, created_at FROM reviews "
            "WHERE list_contains(?, runbook_id) ORDER BY seq",
            [runbooks],
        ).fetchall():
            review = Review(
                runbook_id=rid, decision=decision, reviewer=reviewer, reason=reason or "", created_at=created
            )
            reviews.setdefault(rid, []).append(review)
    return transfers, reviews
