"""Chat completions against any OpenAI-compatible endpoint, with retries, backoff and token accounting."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass

import openai

from rsr_core.settings import Settings

RETRY_STATUS = {408, 409, 429}


@dataclass(frozen=True)
class Completion:
    """One model answer."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int


class LLMError(RuntimeError):
    """The endpoint failed for good (after retries) or answered with a non-retryable error."""


class LLMClient:
    """Thin wrapper over `openai.OpenAI` (implements the `LLM` protocol)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
        backoff_cap_s: float = 8.0,
    ):
        self.base_url = base_url
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0
        )
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s
        self._lock = threading.Lock()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.calls = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMClient:
        """A client for the configured endpoint."""
        if not settings.llm_base_url:
            raise LLMError(
                "no model endpoint configured: set RSR_LLM_BASE_URL (and OPENAI_API_KEY if it needs one), "
                "or start the scripted demo model with `rsr llm serve-scripted --script FILE`"
            )
        return cls(settings.llm_base_url, settings.api_key, settings.llm_timeout_s, settings.llm_max_retries)

    def _retryable(self, exc: Exception) -> bool:
        if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
            return True
        if isinstance(exc, openai.APIStatusError):
            return exc.status_code in RETRY_STATUS or exc.status_code >= 500
        return False

    def complete(
        self,
        messages: list[dict[str, str]],
        model: str,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One chat completion; retries 429/5xx/timeouts with exponential backoff and jitter."""
        attempt = 0
        while True:
            try:
                kwargs = {"model": model, "messages": messages, "temperature": temperature}
                if seed is not None:
                    kwargs["seed"] = seed
                if max_tokens is not None:
                    kwargs["max_tokens"] = max_tokens
                resp = self._client.chat.completions.create(**kwargs)
                break
            except Exception as exc:
                if not self._retryable(exc) or attempt >= self.max_retries:
                    raise LLMError(f"{self.base_url}: model {model!r}: {exc}") from exc
                delay = min(self.backoff_cap_s, self.backoff_s * 2**attempt) * (0.5 + random.random() / 2)
                time.sleep(delay)
                attempt += 1
        text = resp.choices[0].message.content or "" if resp.choices else ""
        usage = resp.usage
        prompt = usage.prompt_tokens if usage else 0
        completion = usage.completion_tokens if usage else 0
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            self.calls += 1
        return Completion(
            text=text, model=resp.model or model, prompt_tokens=prompt, completion_tokens=completion
        )

    def list_models(self) -> list[str]:
        """Model names the endpoint offers (also a cheap check that it answers)."""
        try:
            return [m.id for m in self._client.models.list().data]
        except Exception as exc:
            raise LLMError(f"{self.base_url} does not answer: {exc}") from exc
