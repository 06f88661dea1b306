"""An ATIF-v1.8 document using what later versions added: no session_id or trajectory_id (optional since
v1.7), image content parts (v1.6) in a message and an observation, embedded `subagent_trajectories` with a
`subagent_trajectory_ref` (v1.7), `continued_trajectory_ref`, original tool-call ids, a tool that is not a
terminal command, `agent.tool_definitions` and `llm_call_count` (v1.7)."""

from __future__ import annotations

from typing import Any

IMAGE = {"type": "image", "source": {"media_type": "image/png", "path": "https://example.invalid/screen.png"}}


def rich_atif() -> dict[str, Any]:
    """The document (valid for harbor's `Trajectory` model; checked in tests/formats)."""
    sub = {
        "schema_version": "ATIF-v1.8",
        "trajectory_id": "sub-1",
        "agent": {"name": "searcher", "version": "0.3"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "find the config file"},
            {"step_id": 2, "source": "agent", "message": "It is /etc/app.conf."},
        ],
    }
    return {
        "schema_version": "ATIF-v1.8",
        "agent": {
            "name": "terminus-2",
            "version": "2.0.0",
            "model_name": "model-z",
            "tool_definitions": [{"type": "function", "function": {"name": "bash_command"}}],
        },
        "steps": [
            {
                "step_id": 1,
                "source": "user",
                "message": [{"type": "text", "text": "Fix the page shown here."}, IMAGE],
            },
            {
                "step_id": 2,
                "source": "agent",
                "model_name": "model-z",
                "message": "Analysis: a page\nPlan: look for its config",
                "llm_call_count": 1,
                "tool_calls": [
                    {
                        "tool_call_id": "toolu_01A",
                        "function_name": "bash_command",
                        "arguments": {"keystrokes": "ls /etc\n", "duration": 1},
                        "extra": {"retries": 0},
                    },
                    {
                        "tool_call_id": "toolu_01B",
                        "function_name": "delegate",
                        "arguments": {"task": "find the config file"},
                    },
                ],
                "observation": {
                    "results": [
                        {
                            "source_call_id": "toolu_01A",
                            "content": [{"type": "text", "text": "app.conf"}, IMAGE],
                        },
                        {
                            "source_call_id": "toolu_01B",
                            "content": "It is /etc/app.conf.",
                            "subagent_trajectory_ref": [{"trajectory_id": "sub-1", "session_id": "run-9"}],
                        },
                    ]
                },
                "metrics": {"prompt_tokens": 50, "completion_tokens": 9},
            },
        ],
        "continued_trajectory_ref": "part-2.json",
        "subagent_trajectories": [sub],
    }
