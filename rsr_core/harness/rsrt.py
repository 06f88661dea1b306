"""RSRT: Terminus 2 with the verifier in the loop. On a completion claim the hidden tests run on a snapshot of
the sandbox (the agent's container never sees them); a failure is answered only with "not passed" and a
request to reflect, up to a claim budget.

A claim is verified like a finished run (rsr_core/sandbox/verification.py): the agent's container is frozen
while its diff is checked and it is committed, then thawed; the tests run in a container from the commit,
where none of the agent's processes exist. A claim whose diff touches the verifier's ground does not pass,
whatever the tests said. Each claim's outcome is kept in the trajectory's `extra["rsrt_claims"]`.
"""

from __future__ import annotations

from rsr_core import prompts
from rsr_core.harness.terminus2 import RunState, Terminus2Harness, Turn


class RSRTHarness(Terminus2Harness):
    """Verifier-in-the-loop discovery harness."""

    name = "rsrt"

    def __init__(self, *args, claim_budget: int = 3, **kwargs):
        super().__init__(*args, **kwargs)
        self.claim_budget = claim_budget
        self.rsrt = prompts.load_json("rsrt_v1.json")

    def on_turn(self, state: RunState, turn: Turn) -> tuple[bool, list[str]]:
        """Verify every claim; pass ends the run, failure gets the bare feedback."""
        if not turn.parsed.task_complete:
            return False, []
        state.claims += 1
        verification = state.sandbox.verify(state.task, keep_agent=True)
        state.extra.setdefault("rsrt_claims", []).append(
            {"turn": turn.number, "reward": verification.reward, "tampered": verification.tampered}
        )
        if verification.passed:
            state.done_reason = "passed"
            return True, []
        if state.claims >= self.claim_budget:
            state.done_reason = "claim_budget"
            return True, [self.rsrt["feedback"]]
        return False, [self.rsrt["feedback"], self.rsrt["reflection"]]
