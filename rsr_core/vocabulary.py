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
