"""A corpus of trajectories whose ids and shapes a real corpus can hold and a careless page cannot: harbor's
`task__abc1234`, slashes, spaces and commas, unicode, bidi and zero-width characters, URL syntax, a long id, no
steps at all and 10,000 steps. Written as ATIF files for `rsr ingest`, like any stranger's corpus."""

from __future__ import annotations

import json
from pathlib import Path

IDS = [
    "hello-file__zwdB6fx",
    "__init__",
    "runs/2025/trial 1",
    "with spaces, and a comma",
    "ünïcødé-日本語-🙂",
    "rtl-\u202egnp.exe",
    "zero\u200bwidth",
    "?step=3&compare=a,b#frag%20",
    "x" * 300,
]
NO_STEPS = "no-steps__empty"
MANY_STEPS = "many-steps__10000"
MANY = 10_000


def _doc(trajectory_id: str, steps: list[dict]) -> dict:
    return {
        "schema_version": "ATIF-v1.4",
        "session_id": trajectory_id,
        "agent": {"name": "terminus-2", "version": "1", "model_name": "m"},
        "steps": steps,
        "extra": {"rsr": {"task_id": "hostile-ids", "reward": 1.0}},
    }


def _turn(k: int) -> list[dict]:
    return [
        {
            "step_id": 2 * k + 2,
            "source": "agent",
            "message": f"Analysis: turn {k}\nPlan: look",
            "tool_calls": [
                {"tool_call_id": f"c{k}", "function_name": "bash_command",
                 "arguments": {"keystrokes": f"echo {k}\n", "duration": 0.1}}
            ],
            "observation": {"results": [{"source_call_id": f"c{k}", "content": f"{k}\n"}]},
        },
    ]  # fmt: skip


def write_corpus(directory: Path) -> dict[str, int]:
    """Write the corpus under `directory` (one file per trajectory); returns each trajectory id with its number
    of steps."""
    directory.mkdir(parents=True, exist_ok=True)
    shapes: dict[str, int] = {}
    first = {"step_id": 1, "source": "user", "message": "Print the numbers."}
    for n, tid in enumerate(IDS):
        steps = [first, *_turn(0)]
        steps[1] = {**steps[1], "message": f"Analysis: {tid}\nPlan: echo"}
        shapes[tid] = len(steps)
        (directory / f"t{n}.json").write_text(json.dumps(_doc(tid, steps)))
    (directory / "none.json").write_text(json.dumps(_doc(NO_STEPS, [])))
    shapes[NO_STEPS] = 0
    many = [first]
    for k in range(MANY - 1):
        many += [{**_turn(k)[0], "step_id": k + 2}]
    (directory / "many.json").write_text(json.dumps(_doc(MANY_STEPS, many)))
    shapes[MANY_STEPS] = MANY
    return shapes
