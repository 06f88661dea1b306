"""Harnesses: terminus-2 (general), rsrt (verifier in the loop), statem (workflow state machine)."""

from __future__ import annotations

from rsr_core.harness.rsrt import RSRTHarness
from rsr_core.harness.statem import StateMHarness
from rsr_core.harness.terminus2 import RunResult, Terminus2Harness

HARNESSES: dict[str, type[Terminus2Harness]] = {
    h.name: h for h in (Terminus2Harness, RSRTHarness, StateMHarness)
}
"""Every harness of rsr_core/vocabulary.py's HARNESS_NAMES by its name (tests/test_vocabulary.py checks)."""

__all__ = ["HARNESSES", "RSRTHarness", "RunResult", "StateMHarness", "Terminus2Harness"]
