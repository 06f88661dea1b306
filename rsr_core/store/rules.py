"""The rule "solved", for Python beside SQL. In SQL it is the `rsr_solved(reward, tampered)` macro (migration 3,
whose body is SOLVED_SQL); `solved` is the same rule for a run held in Python (the verifier's verdict, a job's
result before it is stored). tests/store/test_rules.py holds the two to the same answers."""

from __future__ import annotations

SOLVED_AT = 1.0
"""The reward from which a run counts as solved (verified)."""
SOLVED_SQL = "coalesce(reward, 0) >= 1.0 AND NOT coalesce(tampered, FALSE)"
"""The body of the `rsr_solved(reward, tampered)` macro, as migration 3 created it."""


def solved(reward: float | None, tampered: bool | None = False) -> bool:
    """Did a run solve its task: a reward of at least SOLVED_AT (none: not solved; rewards are finite, checked
    where they are read) and no tampering with the verifier (unknown: none)."""
    return (reward or 0.0) >= SOLVED_AT and not tampered
