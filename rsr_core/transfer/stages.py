"""How an answer-transfer evidence line names the stage that found it (the studio and the funnel read it back)."""

from __future__ import annotations

STATIC_MARK = "(static reading)"
"""In every line of the static stage (the commands' spelling read)."""
REPLAY_MARK = "replay: "
"""The start of every line of the replay stage (what the replayed commands produced)."""


def evidence_stage(line: str) -> str:
    """Which stage wrote an evidence line: 'replay', 'static' or 'model' (the model check's own lines)."""
    if line.startswith(REPLAY_MARK):
        return "replay"
    return "static" if STATIC_MARK in line else "model"
