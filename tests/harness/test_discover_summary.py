"""What `rsr discover` prints of a finished run: the failure's one-line reason for every stop that has one."""

from __future__ import annotations

import pytest

from rsr_core.harness.discover import summary_of

UNIT = {"payload": {"run": 1, "task_id": "t", "harness": "terminus-2"}}


def _result(stop: str, exception: str | None) -> dict:
    traj = {"trajectory_id": "x", "reward": None, "exception": exception}
    return {"trajectory": traj, "stop_reason": stop, "turns": 2, "claimed": False, "seconds": 1.0}


@pytest.mark.parametrize(
    ("stop", "exception"),
    [
        ("model_error", "model_error: Error code: 500 - upstream connect error"),
        ("context_length", "context_length: maximum context length is 8192 tokens"),
        ("resource_limit", "resource_limit: the run wrote more than 100000 files"),
        ("sandbox_error", "sandbox_error: the container stopped"),
    ],
)
def test_a_failed_run_says_why(stop, exception):
    summary = summary_of(UNIT, _result(stop, exception), None, "m")
    assert (summary.stop_reason, summary.error) == (stop, exception)


def test_a_run_that_ended_normally_has_no_reason():
    assert summary_of(UNIT, _result("max_turns", "max_turns"), None, "m").error is None
