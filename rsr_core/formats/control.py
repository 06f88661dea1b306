"""Recognising harness-injected steps and harness names in recorded trajectories."""

from __future__ import annotations

import re
from typing import overload

from rsr_core.vocabulary import HARNESS_INFO

# Messages a harness injects that are not part of the task dialogue. Our own harnesses also mark such
# steps explicitly (step extra `harness_control: true`); these patterns catch recorded runs of others.
CONTROL_PATTERNS = [
    # Terminus 2 asks for a second completion claim.
    re.compile(r"are you sure you want to mark the task as complete", re.I),
    # RSRT verifier feedback and the reflection prompt that follows it.
    re.compile(r"^\W*(verifier\W*)?not passed\b", re.I),
    re.compile(r"^\W*\[rsrt\]", re.I),
    re.compile(r"\breflect on (why|what)\b.*\b(fail|not pass)", re.I | re.S),
    # StateM state bookkeeping: phase announcements, transitions, state file updates.
    re.compile(r"^\W*\[statem\]", re.I),
    re.compile(r"^\W*(current )?(phase|state)\s*[:=]\s*(explore|plan|implement|verify|done)\b", re.I),
    re.compile(r"\btransition(ed)? (from \w+ )?to (explore|plan|implement|verify|done)\b", re.I),
]

HARNESS_ALIASES = {spelling: h.name for h in HARNESS_INFO for spelling in (h.name, *h.spellings)}


@overload
def canonical_harness(name: str) -> str: ...
@overload
def canonical_harness(name: None) -> None: ...
def canonical_harness(name: str | None) -> str | None:
    """terminus-2, statem and rsrt recognised in any spelling; other names kept as written."""
    if name is None:
        return None
    return HARNESS_ALIASES.get(name.strip().lower(), name)


def is_control_message(text: str) -> bool:
    """Does this user/system message look injected by a harness?"""
    head = text[:4000]
    return any(p.search(head) for p in CONTROL_PATTERNS)


def task_id_of(name: str | None) -> str | None:
    """Task id = the name with any `org/` prefix removed."""
    if name is None:
        return None
    name = str(name).strip()
    return name.rsplit("/", 1)[-1] or None
