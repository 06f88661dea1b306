"""Names shared across layers (kinds, formats, statuses), defined once and importable without any engine."""

from __future__ import annotations

KINDS: tuple[str, ...] = ("discovery", "rewrite", "eval")
"""Trajectory kinds: a harness solving a task, an Executor run from a runbook, an evaluation run."""
EXPORT_FORMATS: tuple[str, ...] = ("sft-jsonl", "sharegpt", "parquet", "atif", "hf")
"""What `rsr export` writes."""
RUNBOOK_STATUSES: tuple[str, ...] = (
    "critic_pending",
    "critic_rejected",
    "pending_review",
    "approved",
    "human_rejected",
)
"""A runbook round's status (the `runbook_status` view)."""
DECIDED: dict[str, str] = {"approve": "approved", "reject": "rejected"}
"""A reviewer's decisions, each with the word for a runbook that got it."""
HARNESS_NAMES: tuple[str, ...] = ("terminus-2", "rsrt", "statem")
"""The harnesses this project runs."""
SIMILARITY_METRICS: tuple[str, ...] = ("exact", "multiset", "order", "fuzzy", "transition")
"""Command-overlap metrics of a pair of trajectories."""
JOB_STATUSES: tuple[str, ...] = ("pending", "running", "waiting_review", "done", "failed", "cancelled")
"""A job's status (`jobs.status`): created, running, stopped with approved runbooks still to execute (human gate),
finished, stopped by a failed unit, cancelled."""
JOB_SUCCEEDED: tuple[str, ...] = ("done", "waiting_review")
"""Job statuses that ended without a failure or a cancel (a command that ran the job exits 0)."""
JOB_RESUMABLE: tuple[str, ...] = ("running", "waiting_review", "failed", "cancelled")
"""Job statuses `rsr jobs resume` and the studio's resume offer take up (running: its runner died)."""
UNIT_STATUSES: tuple[str, ...] = ("pending", "running", "done", "failed", "cancelled")
"""A work unit's status (`work_units.status`)."""
