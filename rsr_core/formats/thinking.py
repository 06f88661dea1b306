"""Thinking apart from the answer. Reasoning models think before they answer: in a field beside the answer
(`reasoning_content` of vLLM, SGLang and DeepSeek, `reasoning` of newer vLLM and OpenRouter) or, when the
server runs no reasoning parser, inline at the start of the answer (`<think>…</think>` of DeepSeek-R1 distills
and Qwen3; other models use `<thinking>`, `<reasoning>`, `<thought>` or `<seed:think>`). A chat template that
opens the tag itself leaves only the closing one in the answer. Thinking is kept as the step's reasoning and
never parsed as the answer."""

from __future__ import annotations

import re

TAGS = ("think", "thinking", "reasoning", "thought", "seed:think")
_OPEN = re.compile(r"\s*<(" + "|".join(re.escape(t) for t in TAGS) + r")>")
_CLOSE_ONLY = re.compile(r"</(" + "|".join(re.escape(t) for t in TAGS) + r")>")


def split_thinking(text: str) -> tuple[str | None, str]:
    """(thinking or None, answer) of a model's message: the tagged blocks at its start (one left open is
    thinking to the end: an answer cut while thinking), or everything before a closing tag whose opening the
    chat template wrote. The answer loses the blanks that separated it from the thinking."""
    thoughts: list[str] = []
    rest = text
    while match := _OPEN.match(rest):
        close = rest.find(f"</{match.group(1)}>", match.end())
        if close < 0:
            thoughts.append(rest[match.end() :])
            rest = ""
            break
        thoughts.append(rest[match.end() : close])
        rest = rest[close + len(match.group(1)) + 3 :]
    if not thoughts and (close_only := _CLOSE_ONLY.search(text)) and f"<{close_only.group(1)}>" not in text:
        thoughts.append(text[: close_only.start()])
        rest = text[close_only.end() :]
    if not thoughts:
        return None, text
    return "\n\n".join(t.strip() for t in thoughts), rest.lstrip()


def joined_thinking(*parts: str | None) -> str | None:
    """The non-empty parts of a turn's thinking (the field beside the answer, then what was inline), joined."""
    kept = [p for p in parts if p and p.strip()]
    return "\n\n".join(kept) if kept else None
