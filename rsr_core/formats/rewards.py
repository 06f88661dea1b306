"""Reward values read at ingest: finite numbers in [0, 1], and the documented reward-file rules.

A reward decides what counts as solved and what trains, so a value that is not a verifier's verdict (NaN,
±Infinity, 7, "yes") refuses the file instead of being stored. Python's json module accepts the literals
`NaN` and `Infinity`, so a parsed number is not yet a valid reward.
"""

from __future__ import annotations

import math
from typing import Any

from rsr_core.formats.reading import FormatError, preview

EXPECTED = "a finite number in [0, 1]"


def checked_reward(value: Any, where: str) -> float:
    """`value` as a reward, or a FormatError naming `where` (file and field)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatError(f"{where}: expected {EXPECTED}, got {preview(value)}")
    # Compared before any float(): an integer with hundreds of digits does not convert.
    if isinstance(value, int):
        if not 0 <= value <= 1:
            raise FormatError(f"{where}: expected {EXPECTED}, got {preview(value)}")
        return float(value)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise FormatError(f"{where}: expected {EXPECTED}, got {preview(value)}")
    return value


def reward_from_text(text: str, where: str) -> float:
    """A reward written as text (harbor `verifier/reward.txt`)."""
    stripped = text.strip()
    try:
        value = float(stripped)
    except ValueError:
        raise FormatError(f"{where}: expected {EXPECTED}, got {preview(stripped[:80])}") from None
    return checked_reward(value, where)


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def reward_of_mapping(obj: dict, where: str) -> tuple[float | None, str | None]:
    """A harbor rewards dict (`reward.json`, `verifier_result.rewards`): (reward, note).

    The rules: the `reward` key; else the only numeric value; else no reward, and the note says why (the
    run is stored unscored). A chosen value that is not a valid reward refuses the file.
    """
    if obj.get("reward") is not None:
        return checked_reward(obj["reward"], f"{where}.reward"), None
    numeric = [(key, value) for key, value in obj.items() if _numeric(value)]
    if len(numeric) == 1:
        key, value = numeric[0]
        name = str(key) if len(str(key)) <= 60 else str(key)[:57] + "..."
        return checked_reward(value, f"{where}.{name}"), None
    if all(value is None for value in obj.values()):
        return None, None  # e.g. {"reward": null}: never verified, nothing to explain
    if not numeric:
        return None, f"{where} has no 'reward' key and no numeric value; stored unscored"
    keys = preview([key for key, _ in numeric], 120)
    return None, (
        f"{where} has no 'reward' key and {len(numeric)} numeric values {keys}; which one is the reward is "
        "not said, so the run is stored unscored"
    )
