"""Training messages as the export formats carry them: the conversation's rules live in
rsr_core/formats/training.py (the store keeps each trajectory's key from them), re-exported here."""

from __future__ import annotations

from typing import Any

from rsr_core.export.schema import SHAREGPT_ROLES, sharegpt_turns
from rsr_core.formats.training import (
    NO_OUTPUT,
    TRAINING_RULE,
    assistant_content,
    messages_key,
    removed_from_training,
    stored_training,
    terminus_json,
    training_row,
    training_steps,
)
from rsr_core.models import Trajectory

ROW_COLUMNS = (
    "task_id",
    "trajectory_id",
    "source_trajectory_id",
    "runbook_id",
    "reward",
    "kind",
    "harness",
    "model",
)
"""The trajectory fields every row carries beside its conversation (the `tools` column comes from the calls)."""


def sharegpt_conversation(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The same turns as ShareGPT [{from: system|human|gpt|function_call|observation, value}]."""
    return sharegpt_turns(messages)


def row_metadata(trajectory: Trajectory) -> dict[str, Any]:
    """The columns every exported row carries outside its messages."""
    return {name: getattr(trajectory, name) for name in ROW_COLUMNS}


__all__ = [
    "NO_OUTPUT",
    "ROW_COLUMNS",
    "SHAREGPT_ROLES",
    "TRAINING_RULE",
    "assistant_content",
    "messages_key",
    "removed_from_training",
    "row_metadata",
    "sharegpt_conversation",
    "stored_training",
    "terminus_json",
    "training_row",
    "training_steps",
]
