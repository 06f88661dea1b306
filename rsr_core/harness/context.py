"""Keeping a harness's requests within the model's context, the way Terminal-Bench's Terminus 2 does: every
request is sized before it is sent (what the endpoint reported for the conversation so far, plus a
conservative estimate for what was added since), and when the next turn would not fit, or the endpoint refuses
for length anyway, the work so far is summarised by the model and handed to a fresh conversation (the task,
the summary, the current screen)."""

from __future__ import annotations

from dataclasses import dataclass

from rsr_core.protocols import Completion, ModelLimits

BYTES_PER_TOKEN = 3
"""A conservative estimate for text the endpoint has not counted yet (tokenisers average 3.5-4.5 bytes of
English or code per token)."""
MESSAGE_OVERHEAD = 8
"""Tokens a chat template adds around each message."""
MIN_ANSWER = 256
"""The smallest answer budget worth a request (with `max_tokens` at most this, the turn is handed off)."""


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    """Tokens `messages` take at most, by the conservative estimate."""
    return sum(
        len(m["content"].encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN + MESSAGE_OVERHEAD
        for m in messages
    )


@dataclass
class ContextBudget:
    """The token count of a conversation as known from the endpoint's usage, and the answer budget it leaves."""

    limits: ModelLimits
    counted_messages: int = 0
    """How many leading messages of the conversation `counted_tokens` covers."""
    counted_tokens: int = 0
    """What the endpoint reported for them (prompt and answer of the last request)."""

    def prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        """Tokens of `messages` as a request: counted where the endpoint counted them, estimated after."""
        if self.counted_tokens <= 0 or self.counted_messages > len(messages):
            return estimate_tokens(messages)
        return self.counted_tokens + estimate_tokens(messages[self.counted_messages :])

    def answer_budget(self, messages: list[dict[str, str]]) -> int | None:
        """`max_tokens` for a request of `messages`: the role's budget, less when the context is nearly full;
        None when not even a small answer fits (hand off first)."""
        wanted = self.limits.max_tokens
        if self.limits.context_length is None:
            return wanted
        room = self.limits.context_length - self.prompt_tokens(messages)
        smallest = min(wanted, max(MIN_ANSWER, self.limits.context_length // 16))
        return min(wanted, room) if room >= smallest else None

    def measured(self, messages: list[dict[str, str]], completion: Completion) -> None:
        """The endpoint's count after a request of `messages` whose answer was then appended to them."""
        if completion.prompt_tokens > 0:
            self.counted_messages = len(messages)
            self.counted_tokens = completion.prompt_tokens + completion.completion_tokens
        else:
            self.counted_messages = self.counted_tokens = 0

    def forget(self) -> None:
        """A new conversation: nothing of it was counted yet."""
        self.counted_messages = self.counted_tokens = 0


CUT_NOTE = "\n[... {size:,} bytes left out here to fit the model's context ...]\n"


def fit_request(messages: list[dict[str, str]], limits: ModelLimits) -> tuple[list[dict[str, str]], int]:
    """A one-shot request (a Planner, Critic or transfer-check prompt) made to fit the model's context: the answer
    budget it leaves, and when not even a small answer fits, the middle of its longest message left out (with a
    note saying so) until one does."""
    if limits.context_length is None:
        return messages, limits.max_tokens
    smallest = min(limits.max_tokens, max(MIN_ANSWER, limits.context_length // 16))
    room = limits.context_length - estimate_tokens(messages)
    if room >= smallest:
        return messages, min(limits.max_tokens, room)
    longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
    raw = messages[longest]["content"].encode("utf-8", "surrogatepass")
    drop = (smallest - room) * BYTES_PER_TOKEN + len(CUT_NOTE) + 64
    keep = max(0, (len(raw) - drop) // 2)
    content = (
        raw[:keep].decode("utf-8", "ignore")
        + CUT_NOTE.format(size=len(raw) - 2 * keep)
        + raw[len(raw) - keep :].decode("utf-8", "ignore")
    )
    fitted = [*messages[:longest], {**messages[longest], "content": content}, *messages[longest + 1 :]]
    return fitted, max(smallest, min(limits.max_tokens, limits.context_length - estimate_tokens(fitted)))
