"""The rules chat trainers check a row against, as an oracle for the exported messages."""

from __future__ import annotations


def chat_problems(messages: list[dict[str, str]]) -> list[str]:
    """What a chat trainer would refuse in these messages (empty when the row is valid)."""
    problems = []
    roles = [m.get("role") for m in messages]
    body = roles[1:] if roles and roles[0] == "system" else roles
    if not body or body[0] != "user":
        problems.append("the conversation does not start with a user message (after an optional system one)")
    if not roles or roles[-1] != "assistant":
        problems.append("the conversation does not end with an assistant turn")
    for i, role in enumerate(body):
        if role != ("user" if i % 2 == 0 else "assistant"):
            problems.append(
                f"message {i + len(roles) - len(body)}: {role} breaks the user/assistant alternation"
            )
            break
    for i, m in enumerate(messages):
        exported = set(m) == EXPORTED and m["tool_calls"] == [] and m["tool_call_id"] == ""
        if not (set(m) == {"role", "content"} or exported):
            problems.append(f"message {i}: malformed")
        elif not isinstance(m["content"], str) or not m["content"].strip():
            problems.append(f"message {i}: empty or malformed")
    return problems


EXPORTED = {"role", "content", "tool_calls", "tool_call_id"}
"""The fields of every exported chat message (rsr_core/export/schema.py)."""


def plain(messages: list[dict]) -> list[dict[str, str]]:
    """Exported messages of a row without tool calls as {role, content}, checking that they carry none."""
    assert all(set(m) == EXPORTED and m["tool_calls"] == [] and m["tool_call_id"] == "" for m in messages)
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def sft_messages(trajectory, instruction=None):
    """The messages of a trajectory's training row ([] when it makes none)."""
    from rsr_core.formats.training import training_row

    return training_row(trajectory, instruction)[0]
