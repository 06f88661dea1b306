"""Counting what one unit of work asked of the model: calls, tokens and the models used."""

from __future__ import annotations

import threading

from rsr_core.protocols import Completion, ModelLimits


class MeteredLLM:
    """Wraps an `LLM` for the length of one unit and adds up its calls (thread-safe)."""

    def __init__(self, llm) -> None:
        self.llm = llm
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.models: list[str] = []
        self._lock = threading.Lock()

    def limits(self, model: str) -> ModelLimits:
        """The wrapped client's limits (not a call: not counted)."""
        return self.llm.limits(model)

    def complete(
        self,
        messages: list[dict[str, str]],
        model: str,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One call, counted."""
        completion = self.llm.complete(messages, model, temperature, seed, max_tokens)
        with self._lock:
            self.calls += 1
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens
            if model not in self.models:
                self.models.append(model)
        return completion

    def usage(self) -> dict[str, object]:
        """What the unit used: calls, prompt/completion tokens and the model (the first one asked)."""
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model": self.models[0] if self.models else None,
        }
